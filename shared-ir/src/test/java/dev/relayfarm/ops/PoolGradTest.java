package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.NDArray;
import org.junit.jupiter.api.Test;

/** nn.max_pool2d_grad, nn.avg_pool2d_grad: relation and reference kernel by hand. */
class PoolGradTest {
    private static final NDArray X44 = arr(new int[] {1, 1, 4, 4}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    private static final NDArray X33 = arr(new int[] {1, 1, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9);

    @Test
    void relation() {
        assertEquals("Tensor[(1, 3, 9, 10), float32]", inferText("nn.max_pool2d_grad",
                attrs("pool_size", ints(3, 3), "strides", ints(2, 2), "padding", ints(1, 1)), f32(1, 3, 5, 5), f32(1, 3, 9, 10)));
        assertEquals("Tensor[(1, 1, 5, 5), float32]", inferText("nn.avg_pool2d_grad",
                attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "ceil_mode", true, "count_include_pad", true), f32(1, 1, 3, 3), f32(1, 1, 5, 5)));
        // an unknown out_grad is the pooled type
        assertEquals("Tensor[(2, 1, 4, 4), float32]", inferText("nn.max_pool2d_grad", attrs("pool_size", ints(2, 2), "strides", ints(2, 2)), hole(), f32(2, 1, 4, 4)));
        assertEquals("nn.max_pool2d_grad: out_grad (1, 1, 3, 3) is not the pooled shape (1, 1, 2, 2)",
                relationError("nn.max_pool2d_grad", attrs("pool_size", ints(2, 2), "strides", ints(2, 2)), f32(1, 1, 3, 3), f32(1, 1, 4, 4)));
        assertEquals("nn.avg_pool2d_grad: only layout NCHW is supported, got NHWC -> NHWC",
                relationError("nn.avg_pool2d_grad", attrs("pool_size", ints(2, 2), "layout", "NHWC"), f32(1, 1, 1, 1), f32(1, 2, 2, 1)));
        assertEquals("nn.max_pool2d_grad: unknown attribute 'count_include_pad'",
                relationError("nn.max_pool2d_grad", attrs("pool_size", ints(2, 2), "count_include_pad", true), f32(1, 1, 1, 1), f32(1, 1, 2, 2)));
    }

    @Test
    void maxPoolGrad() {
        NDArray g = arr(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        assertValues(run1("nn.max_pool2d_grad", attrs("pool_size", ints(2, 2), "strides", ints(2, 2)), g, X44),
                new int[] {1, 1, 4, 4}, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4);
        // overlapping windows add up where they share the maximum
        assertValues(run1("nn.max_pool2d_grad", attrs("pool_size", ints(2, 2)), arr(new int[] {1, 1, 2, 2}, 1, 1, 1, 1), X33),
                new int[] {1, 1, 3, 3}, 0, 0, 0, 0, 1, 1, 0, 1, 1);
        // ties: the first maximum in window order, as the forward pool
        assertValues(run1("nn.max_pool2d_grad", attrs("pool_size", ints(2, 2)), arr(new int[] {1, 1, 1, 1}, 5), arr(new int[] {1, 1, 2, 2}, 7, 7, 7, 7)),
                new int[] {1, 1, 2, 2}, 5, 0, 0, 0);
        // windows of padding only send nothing
        assertValues(run1("nn.max_pool2d_grad", attrs("pool_size", ints(1, 1), "padding", ints(1, 1)), arr(new int[] {1, 1, 3, 3}, 1, 1, 1, 1, 9, 1, 1, 1, 1),
                arr(new int[] {1, 1, 1, 1}, -2)), new int[] {1, 1, 1, 1}, 9);
    }

    @Test
    void avgPoolGrad() {
        // each window spreads 4 over its 4 elements: corners are in one window, edges in two, the center in four
        assertValues(run1("nn.avg_pool2d_grad", attrs("pool_size", ints(2, 2)), arr(new int[] {1, 1, 2, 2}, 4, 4, 4, 4), X33),
                new int[] {1, 1, 3, 3}, 1, 2, 1, 2, 4, 2, 1, 2, 1);
        // each padded window holds one element: the divisor is 1, or 4 with count_include_pad
        NDArray x = arr(new int[] {1, 1, 2, 2}, 1, 2, 3, 4), g = arr(new int[] {1, 1, 2, 2}, 4, 8, 12, 16);
        assertValues(run1("nn.avg_pool2d_grad", attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "padding", ints(1, 1)), g, x),
                new int[] {1, 1, 2, 2}, 4, 8, 12, 16);
        assertValues(run1("nn.avg_pool2d_grad", attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "padding", ints(1, 1), "count_include_pad", true), g, x),
                new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        // ceil_mode's extra cells are never counted: the last window of 3 at stride 2 holds one element and one extra cell
        assertValues(run1("nn.avg_pool2d_grad", attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "ceil_mode", true, "count_include_pad", true),
                arr(new int[] {1, 1, 2, 2}, 4, 4, 4, 4), X33), new int[] {1, 1, 3, 3}, 1, 1, 2, 1, 1, 2, 2, 2, 4);
    }
}
