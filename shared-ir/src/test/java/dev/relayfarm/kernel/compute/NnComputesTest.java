package dev.relayfarm.kernel.compute;

import static dev.relayfarm.kernel.compute.OpKernelCases.uniform;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * nn operators with reductions through {@link OpComputes}, compiled and compared with the interpreter.
 * Float inputs are in [0, 1) so that float32 accumulation order differences stay relative (no
 * cancellation towards zero) and within rtol 1e-5.
 */
class NnComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();
    private static final OpKernelCases.Gen POS = uniform(0, 1);

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        CASES.add("fn (%x: Tensor[(5, 37), float32], %w: Tensor[(21, 37), float32]) { nn.dense(%x, %w) }", POS, POS);
        CASES.add("fn (%x: Tensor[(2, 3, 16), float32], %w: Tensor[(8, 16), float32]) { nn.dense(%x, %w) }", POS, POS);
        CASES.add("fn (%x: Tensor[(4, 6), int32], %w: Tensor[(3, 6), int32]) { nn.dense(%x, %w) }");
        CASES.add("fn (%x: Tensor[(4, 6), float64], %w: Tensor[(3, 6), float64]) { nn.dense(%x, %w) }", POS, POS);
        CASES.add("fn (%a: Tensor[(4, 6), float32], %b: Tensor[(6, 5), float32]) { nn.matmul(%a, %b) }", POS, POS);
        CASES.add("fn (%a: Tensor[(6, 4), float32], %b: Tensor[(5, 6), float32]) { nn.matmul(%a, %b, transpose_a=True, transpose_b=True) }", POS, POS);
        CASES.add("fn (%a: Tensor[(2, 4, 6), float32], %b: Tensor[(6, 5), float32]) { nn.matmul(%a, %b) }", POS, POS);
        CASES.add("fn (%a: Tensor[(3, 4, 6), float32], %b: Tensor[(3, 5, 6), float32]) { nn.batch_matmul(%a, %b) }", POS, POS);
        CASES.add("fn (%a: Tensor[(3, 4, 6), float32], %b: Tensor[(1, 6, 5), float32]) { nn.batch_matmul(%a, %b, transpose_b=False) }", POS, POS);
        CASES.add("fn (%a: Tensor[(3, 6, 4), int32], %b: Tensor[(3, 5, 6), int32]) { nn.batch_matmul(%a, %b, transpose_a=True) }");
        String[] convs = {
            "strides=[1, 1], padding=[1, 1]", "strides=[2, 2], padding=[1, 0, 2, 1]", "padding=[2, 2], dilation=[2, 2]", "strides=[2, 1]"};
        for (String attrs : convs) {
            CASES.add("fn (%x: Tensor[(2, 4, 9, 10), float32], %w: Tensor[(6, 4, 3, 3), float32]) { nn.conv2d(%x, %w, " + attrs + ") }", POS, POS);
            CASES.add("fn (%x: Tensor[(2, 4, 9, 10), float32], %w: Tensor[(6, 2, 3, 3), float32]) { nn.conv2d(%x, %w, groups=2, " + attrs + ") }", POS, POS);
            CASES.add("fn (%x: Tensor[(1, 4, 9, 10), float32], %w: Tensor[(4, 1, 3, 3), float32]) { nn.conv2d(%x, %w, groups=4, " + attrs + ") }", POS, POS);
        }
        CASES.add("fn (%x: Tensor[(1, 16, 7, 7), float32], %w: Tensor[(8, 16, 1, 1), float32]) { nn.conv2d(%x, %w) }", POS, POS);
        CASES.add("fn (%x: Tensor[(1, 3, 6, 6), int32], %w: Tensor[(2, 3, 3, 3), int32]) { nn.conv2d(%x, %w, padding=[1, 1]) }");
        CASES.add("fn (%x: Tensor[(1, 3, 6, 6), float64], %w: Tensor[(2, 3, 3, 3), float64]) { nn.conv2d(%x, %w, padding=[1, 1]) }");
        String[] pools = {
            "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]", "pool_size=[2, 2], strides=[2, 2]", "pool_size=[3, 3], padding=[1, 1, 2, 2], ceil_mode=True, strides=[2, 2]",
            "pool_size=[3, 3], strides=[1, 1], padding=[1, 1], count_include_pad=True", "pool_size=[2, 3], dilation=[2, 1], strides=[1, 2]",
            // ceil_mode drops the width's last window, which would start on the input's end (10 = 5 * 2)
            "pool_size=[1, 1], strides=[2, 2], ceil_mode=True"};
        for (String attrs : pools) {
            if (!attrs.contains("count_include_pad")) CASES.add("fn (%x: Tensor[(2, 3, 9, 10), float32]) { nn.max_pool2d(%x, " + attrs + ") }");
            CASES.add("fn (%x: Tensor[(2, 3, 9, 10), float32]) { nn.avg_pool2d(%x, " + attrs + ") }");
        }
        CASES.add("fn (%x: Tensor[(2, 3, 9, 10), int32]) { nn.max_pool2d(%x, pool_size=[3, 3], padding=[1, 1]) }");
        String[] argmax = {"pool_size=[2, 2], strides=[2, 2]", "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 2, 2], ceil_mode=True",
            "pool_size=[2, 3], dilation=[2, 1], storage_order=1", "pool_size=[1, 1], padding=[1, 1]"};
        for (String attrs : argmax) {
            CASES.add("fn (%x: Tensor[(2, 3, 9, 10), float32]) { nn.max_pool2d_with_argmax(%x, " + attrs + ") }");
        }
        // ties: small integers repeat, so the first maximum must be chosen
        CASES.add("fn (%x: Tensor[(1, 2, 6, 7), int8]) { nn.max_pool2d_with_argmax(%x, pool_size=[3, 3], strides=[2, 2], storage_order=1) }");
        String[] pools3d = {
            "pool_size=[2, 2, 2], strides=[2, 2, 2]", "pool_size=[3, 2, 3], padding=[1, 0, 1, 1, 1, 0], strides=[2, 1, 2], ceil_mode=True",
            "pool_size=[2, 2, 2], dilation=[2, 1, 2], padding=[1, 1, 1], count_include_pad=True", "pool_size=[1, 1, 1], strides=[2, 2, 2], ceil_mode=True"};
        for (String attrs : pools3d) {
            if (!attrs.contains("count_include_pad")) CASES.add("fn (%x: Tensor[(1, 2, 5, 6, 4), float32]) { nn.max_pool3d(%x, " + attrs + ") }");
            CASES.add("fn (%x: Tensor[(1, 2, 5, 6, 4), float32]) { nn.avg_pool3d(%x, " + attrs + ") }");
        }
        CASES.add("fn (%x: Tensor[(2, 3, 5, 7), float32]) { nn.global_avg_pool2d(%x) }");
        CASES.add("fn (%x: Tensor[(2, 3, 5, 7), float32]) { nn.global_max_pool2d(%x) }");
        CASES.add("fn (%x: Tensor[(2, 3, 5, 7), int8]) { nn.global_max_pool2d(%x) }");
        CASES.add("fn (%x: Tensor[(2, 3, 5, 7), float32]) { nn.dropout(%x, rate=0.5f) }");
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(5);
        assertTrue(CASES.size() >= 38, "cases: " + CASES.size());
    }
}
