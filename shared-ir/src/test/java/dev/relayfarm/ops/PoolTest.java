package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import org.junit.jupiter.api.Test;

/** nn.max_pool2d, nn.avg_pool2d, nn.max_pool3d, nn.avg_pool3d, nn.max_pool2d_with_argmax, nn.global_avg_pool2d, nn.global_max_pool2d. */
class PoolTest {
    private static final NDArray X44 = arr(new int[] {1, 1, 4, 4}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    private static final NDArray X33 = arr(new int[] {1, 1, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9);

    @Test
    void relation() {
        assertEquals("Tensor[(1, 64, 56, 56), float32]",
                inferText("nn.max_pool2d", attrs("pool_size", ints(3, 3), "strides", ints(2, 2), "padding", ints(1, 1)), f32(1, 64, 112, 112)));
        assertEquals("Tensor[(1, 56, 56, 64), float32]", inferText("nn.avg_pool2d",
                attrs("pool_size", ints(3, 3), "strides", ints(2, 2), "padding", ints(1, 1), "layout", "NHWC"), f32(1, 112, 112, 64)));
        assertEquals("Tensor[(1, 1, 1, 1), float32]", inferText("nn.max_pool2d", attrs("pool_size", ints(2, 2), "strides", ints(2, 2)), f32(1, 1, 3, 3)));
        assertEquals("Tensor[(1, 1, 2, 2), float32]",
                inferText("nn.max_pool2d", attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "ceil_mode", true), f32(1, 1, 3, 3)));
        // ceil_mode never adds a window that starts past the input and its leading padding (ONNX / PyTorch):
        // 2 with k=1, stride 2 pools one window, not two; 1 padded by 1 on both sides, k=2, stride 2, likewise
        assertEquals("Tensor[(1, 1, 1, 1), float32]",
                inferText("nn.max_pool2d", attrs("pool_size", ints(1, 1), "strides", ints(2, 2), "ceil_mode", true), f32(1, 1, 2, 2)));
        assertEquals("Tensor[(1, 3, 1, 1), float32]", inferText("nn.avg_pool2d",
                attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "padding", ints(1, 1), "ceil_mode", true), f32(1, 3, 1, 1)));
        assertEquals("Tensor[(1, 1, 3, 3), float32]", inferText("nn.max_pool2d",
                attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "padding", ints(1, 1), "ceil_mode", true), f32(1, 1, 4, 4)));
        assertEquals("Tensor[(n, 8, (h - 2) / 2 + 1, ?), float32]",
                inferText("nn.max_pool2d", attrs("pool_size", ints(2, 2), "strides", ints(2, 2)), f32("n", 8, "h", "?")));
        assertTrue(defers("nn.avg_pool2d", attrs("pool_size", ints(2, 2)), hole()));
        assertEquals("nn.max_pool2d: attribute 'pool_size' is required", relationError("nn.max_pool2d", attrs(), f32(1, 1, 3, 3)));
        assertEquals("nn.max_pool2d: unknown attribute 'count_include_pad'",
                relationError("nn.max_pool2d", attrs("pool_size", ints(2, 2), "count_include_pad", true), f32(1, 1, 3, 3)));
        assertEquals("nn.avg_pool2d: output height would be -1: input 3 + padding 0 is smaller than the dilated pool window 5",
                relationError("nn.avg_pool2d", attrs("pool_size", ints(3, 3), "dilation", ints(2, 1)), f32(1, 1, 3, 3)));
        assertEquals("nn.avg_pool2d: data must have rank 4 for layout NCHW, got Tensor[(3, 3), float32]",
                relationError("nn.avg_pool2d", attrs("pool_size", ints(3, 3)), f32(3, 3)));
    }

    @Test
    void maxPool() {
        assertValues(run1("nn.max_pool2d", attrs("pool_size", ints(2, 2), "strides", ints(2, 2)), X44), new int[] {1, 1, 2, 2}, 6, 8, 14, 16);
        assertValues(run1("nn.max_pool2d", attrs("pool_size", ints(2, 2), "dilation", ints(2, 2)), X44), new int[] {1, 1, 2, 2}, 11, 12, 15, 16);
        assertValues(run1("nn.max_pool2d", attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "ceil_mode", true), X33),
                new int[] {1, 1, 2, 2}, 5, 6, 8, 9);
        assertValues(run1("nn.max_pool2d", attrs("pool_size", ints(1, 1), "strides", ints(2, 2), "ceil_mode", true), arr(new int[] {1, 1, 2, 2}, 1, 2, 3, 4)),
                new int[] {1, 1, 1, 1}, 1);
        // a window made only of padding gives the lowest float32, as TVM pads with min_value
        float lo = -Float.MAX_VALUE;
        assertValues(run1("nn.max_pool2d", attrs("pool_size", ints(1, 1), "padding", ints(1, 1)), arr(new int[] {1, 1, 1, 1}, 5)),
                new int[] {1, 1, 3, 3}, lo, lo, lo, lo, 5, lo, lo, lo, lo);
        // NHWC: two channels pooled independently
        NDArray nhwc = arr(new int[] {1, 2, 2, 2}, 1, -1, 2, -2, 3, -3, 4, -4);
        assertValues(run1("nn.max_pool2d", attrs("pool_size", ints(2, 2), "layout", "NHWC"), nhwc), new int[] {1, 1, 1, 2}, 4, -1);
        assertValues(run1("nn.max_pool2d", attrs("pool_size", ints(2, 2)), arr(DType.INT8, new int[] {1, 1, 2, 2}, -7, -3, -9, -100)),
                new int[] {1, 1, 1, 1}, -3);
    }

    @Test
    void avgPool() {
        assertValues(run1("nn.avg_pool2d", attrs("pool_size", ints(2, 2), "strides", ints(2, 2)), X44), new int[] {1, 1, 2, 2}, 3.5, 5.5, 11.5, 13.5);
        NDArray x = arr(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        assertValues(run1("nn.avg_pool2d", attrs("pool_size", ints(3, 3), "padding", ints(1, 1)), x), new int[] {1, 1, 2, 2}, 2.5, 2.5, 2.5, 2.5);
        double t = 10.0 / 9;
        assertValues(run1("nn.avg_pool2d", attrs("pool_size", ints(3, 3), "padding", ints(1, 1), "count_include_pad", true), x),
                new int[] {1, 1, 2, 2}, t, t, t, t);
        // ceil_mode cells beyond the padding never count, with or without count_include_pad
        for (boolean include : new boolean[] {false, true}) {
            assertValues(run1("nn.avg_pool2d", attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "ceil_mode", true, "count_include_pad", include), X33),
                    new int[] {1, 1, 2, 2}, 3, 4.5, 7.5, 9);
        }
        // asymmetric padding (top 1, left 0, bottom 0, right 1) with count_include_pad: every window has 4 cells
        assertValues(run1("nn.avg_pool2d", attrs("pool_size", ints(2, 2), "padding", ints(1, 0, 0, 1), "count_include_pad", true), x),
                new int[] {1, 1, 2, 2}, 0.75, 0.5, 2.5, 1.5);
    }

    @Test
    void pool3dRelation() {
        assertEquals("Tensor[(1, 3, 16, 16, 16), float32]",
                inferText("nn.max_pool3d", attrs("pool_size", ints(2, 2, 2), "strides", ints(2, 2, 2)), f32(1, 3, 32, 32, 32)));
        // padding {front, top, left, back, bottom, right}; a single value applies to every axis
        assertEquals("Tensor[(2, 3, 5, 4, 3), float32]",
                inferText("nn.avg_pool3d", attrs("pool_size", ints(2), "padding", ints(1, 0, 0, 0, 0, 0)), f32(2, 3, 5, 5, 4)));
        assertEquals("Tensor[(1, 1, 1, 1, 1), float32]",
                inferText("nn.max_pool3d", attrs("pool_size", ints(1, 1, 1), "strides", ints(2, 2, 2), "ceil_mode", true), f32(1, 1, 2, 2, 2)));
        assertEquals("Tensor[(n, 8, d - 2, 2, 2), float32]",
                inferText("nn.max_pool3d", attrs("pool_size", ints(3, 2, 2), "strides", ints(1, 2, 2)), f32("n", 8, "d", 4, 4)));
        assertTrue(defers("nn.avg_pool3d", attrs("pool_size", ints(2, 2, 2)), hole()));
        assertEquals("nn.max_pool3d: only layout NCDHW is supported, got layout \"NDHWC\", out_layout \"\"",
                relationError("nn.max_pool3d", attrs("pool_size", ints(2, 2, 2), "layout", "NDHWC"), f32(1, 4, 4, 4, 3)));
        assertEquals("nn.max_pool3d: data must have rank 5 for layout NCDHW, got Tensor[(1, 1, 4, 4), float32]",
                relationError("nn.max_pool3d", attrs("pool_size", ints(2, 2, 2)), f32(1, 1, 4, 4)));
        assertEquals("nn.avg_pool3d: attribute 'strides' must have 3 values, got 2",
                relationError("nn.avg_pool3d", attrs("pool_size", ints(2, 2, 2), "strides", ints(1, 1)), f32(1, 1, 4, 4, 4)));
        assertEquals("nn.avg_pool3d: output depth would be -1: input 3 + padding 0 is smaller than the dilated pool window 5",
                relationError("nn.avg_pool3d", attrs("pool_size", ints(3, 1, 1), "dilation", ints(2, 1, 1)), f32(1, 1, 3, 3, 3)));
    }

    @Test
    void pool3dKernel() {
        NDArray cube = arr(new int[] {1, 1, 2, 2, 2}, 1, 2, 3, 4, 5, 6, 7, 8);
        assertValues(run1("nn.max_pool3d", attrs("pool_size", ints(2, 2, 2)), cube), new int[] {1, 1, 1, 1, 1}, 8);
        assertValues(run1("nn.avg_pool3d", attrs("pool_size", ints(2, 2, 2)), cube), new int[] {1, 1, 1, 1, 1}, 4.5);
        // padded by 1 everywhere: the first window holds element 1 only, the centre one all eight
        NDArray avg = run1("nn.avg_pool3d", attrs("pool_size", ints(2, 2, 2), "padding", ints(1)), cube);
        assertEquals(1.0, avg.getDouble(0), 1e-6);
        assertEquals(4.5, avg.getDouble(13), 1e-6);
        NDArray withPad = run1("nn.avg_pool3d", attrs("pool_size", ints(2, 2, 2), "padding", ints(1), "count_include_pad", true), cube);
        assertEquals(1.0 / 8, withPad.getDouble(0), 1e-6);
        // dilation 2 over 3x3x3 (values 0..26): the one window takes the eight corners
        double[] v = new double[27];
        for (int i = 0; i < 27; i++) v[i] = i;
        assertValues(run1("nn.max_pool3d", attrs("pool_size", ints(2, 2, 2), "dilation", ints(2, 2, 2)), arr(new int[] {1, 1, 3, 3, 3}, v)),
                new int[] {1, 1, 1, 1, 1}, 26);
        assertValues(run1("nn.avg_pool3d", attrs("pool_size", ints(2, 2, 2), "dilation", ints(2, 2, 2)), arr(new int[] {1, 1, 3, 3, 3}, v)),
                new int[] {1, 1, 1, 1, 1}, 13);
        // a unit depth reproduces the 2-D pools, ceil_mode included
        NDArray x44 = arr(new int[] {1, 1, 1, 4, 4}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
        assertValues(run1("nn.max_pool3d", attrs("pool_size", ints(1, 2, 2), "strides", ints(1, 2, 2)), x44), new int[] {1, 1, 1, 2, 2}, 6, 8, 14, 16);
        NDArray x33 = arr(new int[] {1, 1, 1, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9);
        for (boolean include : new boolean[] {false, true}) {
            assertValues(run1("nn.avg_pool3d", attrs("pool_size", ints(1, 2, 2), "strides", ints(1, 2, 2), "ceil_mode", true, "count_include_pad", include), x33),
                    new int[] {1, 1, 1, 2, 2}, 3, 4.5, 7.5, 9);
        }
    }

    @Test
    void maxPoolWithArgmax() {
        String op = "nn.max_pool2d_with_argmax";
        assertEquals("(Tensor[(1, 3, 2, 2), float32], Tensor[(1, 3, 2, 2), int64])",
                inferText(op, attrs("pool_size", ints(2, 2), "strides", ints(2, 2)), f32(1, 3, 5, 5)));
        assertEquals("(Tensor[(1, 1, 1, 1), float32], Tensor[(1, 1, 1, 1), int64])",
                inferText(op, attrs("pool_size", ints(1, 1), "strides", ints(2, 2), "ceil_mode", true), f32(1, 1, 2, 2)));
        assertEquals(op + ": storage_order must be 0 or 1, got 2", relationError(op, attrs("pool_size", ints(2, 2), "storage_order", 2), f32(1, 1, 4, 4)));
        assertEquals(op + ": unknown attribute 'count_include_pad'",
                relationError(op, attrs("pool_size", ints(2, 2), "count_include_pad", true), f32(1, 1, 4, 4)));
        // two channels of 1..16 (the second +16): indices count batch and channel, row-major or column-major
        double[] v = new double[32];
        for (int i = 0; i < 32; i++) v[i] = i + 1;
        NDArray x = arr(new int[] {1, 2, 4, 4}, v);
        java.util.List<NDArray> rowMajor = run(op, attrs("pool_size", ints(2, 2), "strides", ints(2, 2)), x);
        assertValues(rowMajor.get(0), new int[] {1, 2, 2, 2}, 6, 8, 14, 16, 22, 24, 30, 32);
        assertValues(rowMajor.get(1), new int[] {1, 2, 2, 2}, 5, 7, 13, 15, 21, 23, 29, 31);
        assertEquals(DType.INT64, rowMajor.get(1).dtype());
        java.util.List<NDArray> colMajor = run(op, attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "storage_order", 1), x);
        assertValues(colMajor.get(1), new int[] {1, 2, 2, 2}, 5, 13, 7, 15, 21, 29, 23, 31);
        // ties keep the first maximum in window order; padding is never the argmax
        assertValues(run(op, attrs("pool_size", ints(2, 2)), arr(new int[] {1, 1, 2, 2}, 7, 7, 7, 7)).get(1), new int[] {1, 1, 1, 1}, 0);
        java.util.List<NDArray> padded = run(op, attrs("pool_size", ints(2, 2), "padding", ints(1, 1)), arr(new int[] {1, 1, 1, 1}, -5));
        assertValues(padded.get(0), new int[] {1, 1, 2, 2}, -5, -5, -5, -5);
        assertValues(padded.get(1), new int[] {1, 1, 2, 2}, 0, 0, 0, 0);
    }

    @Test
    void globalPools() {
        assertEquals("Tensor[(n, 8, 1, 1), float32]", inferText("nn.global_avg_pool2d", attrs(), f32("n", 8, "?", 7)));
        assertEquals("Tensor[(2, 1, 1, 8), float32]", inferText("nn.global_max_pool2d", attrs("layout", "NHWC"), f32(2, 7, 7, 8)));
        assertEquals("nn.global_avg_pool2d: layout must be a permutation of NCHW, optionally with C split into blocks (NCHW16c), got \"NC\"",
                relationError("nn.global_avg_pool2d", attrs("layout", "NC"), f32(2, 7, 7, 8)));
        NDArray x = arr(new int[] {1, 2, 2, 2}, 1, 2, 3, 4, 5, 6, 7, 8);
        assertValues(run1("nn.global_avg_pool2d", attrs(), x), new int[] {1, 2, 1, 1}, 2.5, 6.5);
        assertValues(run1("nn.global_max_pool2d", attrs(), x), new int[] {1, 2, 1, 1}, 4, 8);
        assertValues(run1("nn.global_max_pool2d", attrs("layout", "NHWC"), x), new int[] {1, 1, 1, 2}, 7, 8);
    }

    @Test
    void blockedLayouts() {
        assertEquals("Tensor[(1, 2, 4, 4, 16), float32]", inferText("nn.max_pool2d",
                attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "layout", "NCHW16c"), f32(1, 2, 8, 8, 16)));
        assertEquals("Tensor[(1, 4, 4, 4, 8), float32]", inferText("nn.avg_pool2d",
                attrs("pool_size", ints(2, 2), "strides", ints(2, 2), "layout", "NCHW16c", "out_layout", "NCHW8c"), f32(1, 2, 8, 8, 16)));
        assertEquals("Tensor[(2, 4, 1, 1, 4), float32]", inferText("nn.global_avg_pool2d", attrs("layout", "NCHW4c"), f32(2, 4, 7, 7, 4)));
        assertEquals("Tensor[(2, 1, 1, 16), float32]",
                inferText("nn.global_max_pool2d", attrs("layout", "NCHW4c", "out_layout", "NHWC"), f32(2, 4, 7, 7, 4)));
        assertEquals("nn.max_pool2d: layout must be a permutation of NCHW, optionally with C split into blocks (NCHW16c), got \"NCHW4h\"",
                relationError("nn.max_pool2d", attrs("pool_size", ints(2, 2), "layout", "NCHW4h"), f32(1, 2, 8, 2, 4)));
        assertEquals("nn.max_pool2d: data must have rank 5 for layout NCHW16c, got Tensor[(1, 16, 8, 8), float32]",
                relationError("nn.max_pool2d", attrs("pool_size", ints(2, 2), "layout", "NCHW16c"), f32(1, 16, 8, 8)));
        assertEquals("nn.max_pool2d: data (1, 2, 8, 8, 4): block axis 16c of NCHW16c has size 4",
                relationError("nn.max_pool2d", attrs("pool_size", ints(2, 2), "layout", "NCHW16c"), f32(1, 2, 8, 8, 4)));
        assertEquals("nn.avg_pool2d: output in NCHW8c: axis C of size 4 does not divide into blocks of 8 for NCHW8c",
                relationError("nn.avg_pool2d", attrs("pool_size", ints(2, 2), "layout", "NCHW", "out_layout", "NCHW8c"), f32(1, 4, 8, 8)));
        // NCHW2c with 4 channels: element (c, y, x) = 100 c + 10 y + x at [0, c / 2, y, x, c % 2]
        double[] v = new double[4 * 3 * 3];
        for (int c = 0; c < 4; c++) for (int y = 0; y < 3; y++) for (int x = 0; x < 3; x++) v[((c / 2 * 3 + y) * 3 + x) * 2 + c % 2] = 100 * c + 10 * y + x;
        NDArray blocked = NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 2, 3, 3, 2}, v);
        // a 2x2 max pool: the bottom-right window element, per channel, same blocking out
        assertValues(run1("nn.max_pool2d", attrs("pool_size", ints(2, 2), "layout", "NCHW2c"), blocked), new int[] {1, 2, 2, 2, 2},
                11, 111, 12, 112, 21, 121, 22, 122, 211, 311, 212, 312, 221, 321, 222, 322);
        // global average to NCHW: per channel mean 100 c + 11
        assertValues(run1("nn.global_avg_pool2d", attrs("layout", "NCHW2c", "out_layout", "NCHW"), blocked), new int[] {1, 4, 1, 1}, 11, 111, 211, 311);
        assertValues(run1("nn.global_max_pool2d", attrs("layout", "NCHW2c"), blocked), new int[] {1, 2, 1, 1, 2}, 22, 122, 222, 322);
    }
}
