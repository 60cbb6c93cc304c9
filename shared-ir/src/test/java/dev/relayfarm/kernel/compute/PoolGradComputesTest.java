package dev.relayfarm.kernel.compute;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.kernel.codegen.CCompiler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** nn.max_pool2d_grad and nn.avg_pool2d_grad through {@link OpComputes}, compiled and compared with the interpreter. */
class PoolGradComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        // {pooled shape, attributes} on a (2, 3, 9, 10) input
        String[][] pools = {
            {"(2, 3, 5, 5)", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]"}, {"(2, 3, 4, 5)", "pool_size=[2, 2], strides=[2, 2]"},
            {"(2, 3, 5, 6)", "pool_size=[3, 3], padding=[1, 1, 2, 2], ceil_mode=True, strides=[2, 2]"},
            {"(2, 3, 7, 4)", "pool_size=[2, 3], dilation=[2, 1], strides=[1, 2]"}, {"(2, 3, 11, 12)", "pool_size=[1, 1], padding=[1, 1]"},
            {"(2, 3, 1, 1)", "pool_size=[9, 10]"},
            // windows that do not overlap take the direct path (one window per input element): dilated with padding, ceil_mode
            {"(2, 3, 3, 5)", "pool_size=[2, 2], dilation=[2, 1], strides=[3, 2], padding=[1, 0]"},
            {"(2, 3, 5, 5)", "pool_size=[2, 2], strides=[2, 2], ceil_mode=True"}};
        for (String[] p : pools) {
            CASES.add("fn (%g: Tensor[" + p[0] + ", float32], %x: Tensor[(2, 3, 9, 10), float32]) { nn.max_pool2d_grad(%g, %x, " + p[1] + ") }");
            CASES.add("fn (%g: Tensor[" + p[0] + ", float32], %x: Tensor[(2, 3, 9, 10), float32]) { nn.avg_pool2d_grad(%g, %x, " + p[1] + ") }");
            CASES.add("fn (%g: Tensor[" + p[0] + ", float64], %x: Tensor[(2, 3, 9, 10), float64]) { nn.avg_pool2d_grad(%g, %x, " + p[1]
                    + ", count_include_pad=True) }");
        }
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(7);
        assertEquals(24, CASES.size());
    }
}
