package dev.relayfarm.kernel.compute;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.kernel.codegen.CCompiler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * scatter_elements and scatter_nd through {@link OpComputes} (every reduction, float32/float64 and int32
 * data, int32 and int64 indices, several axes, negative indices and duplicates), compiled and compared
 * with the interpreter. Indices are drawn from [-n, n) of the dimension they index, small enough ranges
 * that duplicate targets are common, which is where the fold order and "last update wins" matter.
 */
class ScatterComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();
    /** add and mul compared bit for bit: data mixes -0.0 with magnitudes where float32 rounding depends on the fold order. */
    private static final OpKernelCases EXACT = new OpKernelCases().exact();
    private static final String[] REDUCTIONS = {"update", "add", "mul", "min", "max"};

    /** {data type, indices type, updates type, axis, index range n} */
    private static final String[][] ELEMENTS = {
        {"(4, 3), float32", "(2, 3), int64", "(2, 3), float32", "0", "4"},
        {"(3, 5), float32", "(3, 4), int32", "(3, 4), float32", "1", "5"},
        {"(3, 5), float32", "(2, 6), int64", "(2, 6), float32", "-1", "5"},
        {"(2, 4, 3), float32", "(2, 6, 2), int64", "(2, 6, 2), float32", "1", "4"},
        {"(4, 3, 2), int32", "(3, 2, 2), int64", "(3, 2, 2), int32", "0", "4"},
        {"(2, 3, 4), int32", "(1, 3, 5), int32", "(1, 3, 5), int32", "2", "4"},
        {"(5), float64", "(7), int64", "(7), float64", "0", "5"},
    };

    /** {data type, indices type, updates type, index range n (valid for every indexed dim)} */
    private static final String[][] ND = {
        {"(4, 3), float32", "(1, 5), int64", "(5, 3), float32", "4"},
        {"(3, 3, 2), float32", "(2, 5), int32", "(5, 2), float32", "3"},
        {"(2, 3, 4), float32", "(3, 2, 2), int64", "(2, 2), float32", "2"},
        {"(3, 4), int32", "(2, 2, 3), int64", "(2, 3), int32", "3"},
        {"(5), int32", "(1, 6), int64", "(6), int32", "5"},
        {"(4, 2), float64", "(1), int64", "(2), float64", "4"},
    };

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        for (String how : REDUCTIONS) {
            for (String[] e : ELEMENTS) {
                int n = Integer.parseInt(e[4]);
                CASES.add("fn (%d: Tensor[" + e[0] + "], %i: Tensor[" + e[1] + "], %u: Tensor[" + e[2] + "]) { scatter_elements(%d, %i, %u, axis="
                        + e[3] + ", reduction=\"" + how + "\") }", null, OpKernelCases.ints(-n, n - 1), null);
            }
            for (String[] e : ND) {
                int n = Integer.parseInt(e[3]);
                CASES.add("fn (%d: Tensor[" + e[0] + "], %i: Tensor[" + e[1] + "], %u: Tensor[" + e[2] + "]) { scatter_nd(%d, %i, %u, mode=\""
                        + how + "\") }", null, OpKernelCases.ints(-n, n - 1), null);
            }
        }
        CASES.build();
        OpKernelCases.Gen data = pick(1e8, -0.0, 16777216, 0.1, -3.3e7, 1.5, -0.0);
        OpKernelCases.Gen updates = pick(3, 0.3, -5, 3, 1e-3, 7, 1.1);
        for (String how : new String[] {"add", "mul"}) {
            for (String t : new String[] {"float32", "float64"}) {
                EXACT.add("fn (%d: Tensor[(6, 4), " + t + "], %i: Tensor[(5, 4), int64], %u: Tensor[(5, 4), " + t + "]) { scatter_elements(%d, %i, %u, axis=0, reduction=\"" + how + "\") }",
                        data, OpKernelCases.ints(-6, 5), updates);
                EXACT.add("fn (%d: Tensor[(4, 3), " + t + "], %i: Tensor[(1, 7), int64], %u: Tensor[(7, 3), " + t + "]) { scatter_nd(%d, %i, %u, mode=\"" + how + "\") }",
                        data, OpKernelCases.ints(-4, 3), updates);
            }
        }
        EXACT.build();
    }

    /** Each element drawn from {@code values}. */
    private static OpKernelCases.Gen pick(double... values) {
        return (rnd, t, shape) -> {
            double[] v = new double[dev.relayfarm.ir.NDArray.elementCount(t, shape)];
            for (int i = 0; i < v.length; i++) v[i] = values[rnd.nextInt(values.length)];
            return dev.relayfarm.ir.NDArray.fromDoubles(t, shape, v);
        };
    }

    @AfterAll
    static void close() {
        CASES.close();
        EXACT.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(11);
        CASES.assertAllMatch(12);
        assertEquals(REDUCTIONS.length * (ELEMENTS.length + ND.length), CASES.size());
    }

    @Test
    void addAndMulFoldInTheInterpretersOrder() {
        EXACT.assertAllMatch(3);
        EXACT.assertAllMatch(4);
        assertEquals(8, EXACT.size());
    }
}
