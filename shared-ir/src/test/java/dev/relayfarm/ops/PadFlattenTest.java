package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import org.junit.jupiter.api.Test;

/** nn.pad and nn.batch_flatten. */
class PadFlattenTest {

    @Test
    void padRelation() {
        assertEquals("Tensor[(n + 2, 5), float32]",
                inferText("nn.pad", attrs("pad_width", new int[][] {{1, 1}, {2, 0}}), f32("n", 3), f32()));
        assertEquals("Tensor[(?, 3), int8]", inferText("nn.pad", attrs("pad_width", new int[][] {{1, 1}, {0, 0}}, "pad_mode", "edge"),
                tensor(DType.INT8, "?", 3), tensor(DType.INT8)));
        assertTrue(defers("nn.pad", attrs("pad_width", new int[][] {{1, 1}}), hole(), f32()));
        assertEquals("nn.pad: pad_width has 1 entries but data Tensor[(2, 3), float32] has rank 2",
                relationError("nn.pad", attrs("pad_width", new int[][] {{1, 1}}), f32(2, 3), f32()));
        assertEquals("nn.pad: pad_value must be a scalar, got Tensor[(1), float32]",
                relationError("nn.pad", attrs("pad_width", new int[][] {{1, 1}}), f32(2), f32(1)));
        assertEquals("nn.pad: reflect padding [2, 0] on axis 0 must be smaller than the dimension 2",
                relationError("nn.pad", attrs("pad_width", new int[][] {{2, 0}}, "pad_mode", "reflect"), f32(2), f32()));
        assertEquals("nn.pad: pad_mode must be \"constant\", \"edge\", \"reflect\" or \"wrap\", got \"circular\"",
                relationError("nn.pad", attrs("pad_width", new int[][] {{2, 0}}, "pad_mode", "circular"), f32(2), f32()));
        assertEquals("nn.pad: wrap padding needs a non-empty axis 0",
                relationError("nn.pad", attrs("pad_width", new int[][] {{1, 0}}, "pad_mode", "wrap"), f32(0), f32()));
        assertEquals("nn.pad: attribute 'pad_width' is required", relationError("nn.pad", attrs(), f32(2), f32()));
        assertEquals("nn.pad: unknown attribute 'value'", relationError("nn.pad", attrs("pad_width", new int[][] {{1, 1}}, "value", 1), f32(2), f32()));
    }

    @Test
    void padKernel() {
        NDArray x = arr(new int[] {2, 2}, 1, 2, 3, 4);
        assertValues(run1("nn.pad", attrs("pad_width", new int[][] {{1, 0}, {0, 2}}), x, NDArray.scalar(9f)),
                new int[] {3, 4}, 9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9);
        NDArray v = arr(new int[] {3}, 1, 2, 3);
        assertValues(run1("nn.pad", attrs("pad_width", new int[][] {{2, 1}}, "pad_mode", "edge"), v, NDArray.scalar(0f)),
                new int[] {6}, 1, 1, 1, 2, 3, 3);
        assertValues(run1("nn.pad", attrs("pad_width", new int[][] {{2, 2}}, "pad_mode", "reflect"), v, NDArray.scalar(0f)),
                new int[] {7}, 3, 2, 1, 2, 3, 2, 1);
        // wrap continues from the opposite border, and wider than the axis wraps more than once
        assertValues(run1("nn.pad", attrs("pad_width", new int[][] {{4, 2}}, "pad_mode", "wrap"), v, NDArray.scalar(0f)),
                new int[] {9}, 3, 1, 2, 3, 1, 2, 3, 1, 2);
        NDArray xi = arr(DType.INT64, new int[] {1}, 5);
        assertValues(run1("nn.pad", attrs("pad_width", new int[][] {{1, 1}}), xi, NDArray.scalar(-1L)), new int[] {3}, -1, 5, -1);
    }

    @Test
    void batchFlatten() {
        assertEquals("Tensor[(n, 24), float32]", inferText("nn.batch_flatten", attrs(), f32("n", 2, 3, 4)));
        assertEquals("Tensor[(2, ?), float32]", inferText("nn.batch_flatten", attrs(), f32(2, "?", 3)));
        assertEquals("Tensor[(2, 3 * h), float32]", inferText("nn.batch_flatten", attrs(), f32(2, 3, "h")));
        assertEquals("nn.batch_flatten: data must have rank >= 1, got float32", relationError("nn.batch_flatten", attrs(), f32()));
        NDArray x = arr(new int[] {2, 1, 2}, 1, 2, 3, 4);
        assertValues(run1("nn.batch_flatten", attrs(), x), new int[] {2, 2}, 1, 2, 3, 4);
    }
}
