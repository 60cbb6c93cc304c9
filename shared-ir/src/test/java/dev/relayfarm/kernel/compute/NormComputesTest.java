package dev.relayfarm.kernel.compute;

import static dev.relayfarm.kernel.compute.OpKernelCases.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.te.Te;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** nn.batch_norm (3 outputs), nn.layer_norm and nn.lrn through {@link OpComputes}, in one module, against the interpreter. */
class NormComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();
    /** Variances must be positive. */
    private static final OpKernelCases.Gen VAR = uniform(0.1, 2);

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        String p4 = "%g: Tensor[(4), float32], %b: Tensor[(4), float32], %m: Tensor[(4), float32], %v: Tensor[(4), float32]";
        CASES.add("fn (%x: Tensor[(2, 4, 3, 5), float32], " + p4 + ") { nn.batch_norm(%x, %g, %b, %m, %v) }", null, null, null, null, VAR);
        CASES.add("fn (%x: Tensor[(2, 3, 5, 4), float32], " + p4 + ") { nn.batch_norm(%x, %g, %b, %m, %v, axis=-1, epsilon=0.01f) }", null, null, null, null, VAR);
        CASES.add("fn (%x: Tensor[(2, 4, 3), float32], " + p4 + ") { nn.batch_norm(%x, %g, %b, %m, %v, center=False, scale=False) }", null, null, null, null, VAR);
        CASES.add("fn (%x: Tensor[(3, 4), float64], %g: Tensor[(4), float64], %b: Tensor[(4), float64], %m: Tensor[(4), float64], %v: Tensor[(4), float64]) "
                + "{ nn.batch_norm(%x, %g, %b, %m, %v) }", null, null, null, null, VAR);
        CASES.add("fn (%x: Tensor[(2, 3, 8), float32], %g: Tensor[(8), float32], %b: Tensor[(8), float32]) { nn.layer_norm(%x, %g, %b) }");
        CASES.add("fn (%x: Tensor[(2, 6, 5), float32], %g: Tensor[(6), float32], %b: Tensor[(6), float32]) { nn.layer_norm(%x, %g, %b, axis=1, epsilon=0.001f) }");
        CASES.add("fn (%x: Tensor[(4, 7), float32], %g: Tensor[(7), float32], %b: Tensor[(7), float32]) { nn.layer_norm(%x, %g, %b, center=False, scale=False) }");
        CASES.add("fn (%x: Tensor[(9), float64], %g: Tensor[(9), float64], %b: Tensor[(9), float64]) { nn.layer_norm(%x, %g, %b) }");
        CASES.add("fn (%x: Tensor[(2, 7, 3, 4), float32]) { nn.lrn(%x) }");
        CASES.add("fn (%x: Tensor[(2, 7, 3, 4), float32]) { nn.lrn(%x, size=4, alpha=0.001f, beta=0.5f, bias=1f) }");
        CASES.add("fn (%x: Tensor[(2, 3, 6), float32]) { nn.lrn(%x, size=3, axis=-1, alpha=0.1f) }");
        CASES.add("fn (%x: Tensor[(1, 9, 2, 2), float64]) { nn.lrn(%x, size=1) }");
        // float32 with the exponents the roots do not cover (pow) and beta = 1 (none)
        CASES.add("fn (%x: Tensor[(1, 6, 3, 3), float32]) { nn.lrn(%x, size=3, alpha=0.5f, beta=0.6f, bias=2f) }");
        CASES.add("fn (%x: Tensor[(1, 6, 3, 3), float32]) { nn.lrn(%x, size=5, alpha=0.5f, beta=1f, bias=1f) }");
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(3);
        assertEquals(14, CASES.size());
    }

    @Test
    void integerNormalizationIsRejectedByName() {
        var x = Te.placeholder("x", List.of(2, 4), DType.INT32);
        var e = assertThrows(UnsupportedOperationException.class,
                () -> OpComputes.compute("nn.lrn", List.of(x), Attrs.EMPTY, TensorType.of(DType.INT32, 2, 4)));
        assertEquals("nn.lrn: needs a float tensor, got int32", e.getMessage());
    }
}
