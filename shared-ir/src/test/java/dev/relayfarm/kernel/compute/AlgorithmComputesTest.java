package dev.relayfarm.kernel.compute;

import static dev.relayfarm.kernel.compute.OpKernelCases.ints;
import static dev.relayfarm.kernel.compute.OpKernelCases.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** cumsum, cumprod, topk, einsum and det through {@link OpComputes}, in one module, against the interpreter. */
class AlgorithmComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();
    /** Few distinct values: many ties, which topk must order by index. */
    private static final OpKernelCases.Gen TIES = ints(-3, 3);
    /** Floats with some NaNs, which sort above every number. */
    private static final OpKernelCases.Gen NANS = (rnd, t, shape) -> {
        NDArray a = uniform(-2, 2).make(rnd, t, shape);
        for (int i = 0; i < a.elementCount(); i++) if (rnd.nextInt(6) == 0) a.setDouble(i, Double.NaN);
        return a;
    };

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        for (String op : new String[] {"cumsum", "cumprod"}) {
            CASES.add("fn (%x: Tensor[(3, 7), float32]) { " + op + "(%x, axis=1) }");
            CASES.add("fn (%x: Tensor[(4, 3, 5), float32]) { " + op + "(%x, axis=0, exclusive=True) }");
            CASES.add("fn (%x: Tensor[(2, 3, 4), float32]) { " + op + "(%x) }");
            CASES.add("fn (%x: Tensor[(3, 6), int32]) { " + op + "(%x, axis=-1) }", ints(-4, 4));
            CASES.add("fn (%x: Tensor[(3, 6), int32]) { " + op + "(%x, axis=-1, dtype=\"int64\", exclusive=True) }", ints(-4, 4));
            CASES.add("fn (%x: Tensor[(3, 6), int8]) { " + op + "(%x, axis=1) }", ints(-4, 4));
            CASES.add("fn (%x: Tensor[(3, 6), int32]) { " + op + "(%x, axis=1, dtype=\"float32\") }", ints(-4, 4));
            CASES.add("fn (%x: Tensor[(5, 4), float64]) { " + op + "(%x, axis=0) }");
        }
        CASES.add("fn (%x: Tensor[(3, 9), float32]) { topk(%x, k=4) }");
        CASES.add("fn (%x: Tensor[(3, 9), float32]) { topk(%x, k=4, is_ascend=True) }", TIES);
        CASES.add("fn (%x: Tensor[(3, 9), float32]) { topk(%x, k=9) }", TIES);
        CASES.add("fn (%x: Tensor[(3, 9), float32]) { topk(%x, k=0, ret_type=\"values\") }", NANS);
        CASES.add("fn (%x: Tensor[(3, 9), float32]) { topk(%x, k=5, is_ascend=True, ret_type=\"indices\", dtype=\"int64\") }", NANS);
        CASES.add("fn (%x: Tensor[(6, 2, 5), float32]) { topk(%x, k=3, axis=0) }", TIES);
        CASES.add("fn (%x: Tensor[(4, 7, 3), int32]) { topk(%x, k=2, axis=1) }", TIES);
        CASES.add("fn (%x: Tensor[(4, 7), uint8]) { topk(%x, k=3, is_ascend=True) }");
        CASES.add("fn (%x: Tensor[(2, 8), float64]) { topk(%x, k=8, ret_type=\"indices\") }");
        CASES.add("fn (%a: Tensor[(3, 4), float32], %b: Tensor[(4, 5), float32]) { einsum((%a, %b), equation=\"ij,jk->ik\") }");
        CASES.add("fn (%a: Tensor[(2, 3, 4), float32], %b: Tensor[(2, 4, 5), float32]) { einsum((%a, %b), equation=\"bij,bjk->bik\") }");
        CASES.add("fn (%a: Tensor[(4, 4), float32]) { einsum((%a,), equation=\"ii->i\") }");
        CASES.add("fn (%a: Tensor[(4, 4), float32]) { einsum((%a,), equation=\"ii\") }");
        CASES.add("fn (%a: Tensor[(3, 4), float32]) { einsum((%a,), equation=\"ij->ji\") }");
        CASES.add("fn (%a: Tensor[(2, 1, 3, 4), float32], %b: Tensor[(5, 4, 2), float32]) { einsum((%a, %b), equation=\"...ij,...jk->...ik\") }");
        CASES.add("fn (%a: Tensor[(3), int32], %b: Tensor[(4), int32]) { einsum((%a, %b), equation=\"i,j->ij\") }");
        CASES.add("fn (%a: Tensor[(3, 4), int32], %b: Tensor[(4), int32], %c: Tensor[(3), int32]) { einsum((%a, %b, %c), equation=\"ij,j,i\") }");
        // det: Gaussian elimination with partial pivoting; small integers make ties between pivot
        // candidates, zero pivots and singular matrices (det exactly 0) common
        CASES.add("fn (%a: Tensor[(2, 2), float32]) { det(%a) }");
        CASES.add("fn (%a: Tensor[(1, 1), float32]) { det(%a) }");
        CASES.add("fn (%a: Tensor[(6, 3, 3), float32]) { det(%a) }");
        CASES.add("fn (%a: Tensor[(40, 3, 3), float32]) { det(%a) }", ints(-1, 1));
        CASES.add("fn (%a: Tensor[(2, 3, 4, 4), float64]) { det(%a) }", ints(-2, 2));
        CASES.add("fn (%a: Tensor[(3, 7, 7), float64]) { det(%a) }");
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(17);
        assertEquals(39, CASES.size());
    }
}
