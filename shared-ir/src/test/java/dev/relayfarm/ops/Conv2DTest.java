package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Conv2DTest {
    private static final String OP = "nn.conv2d";

    @Test
    void relationNchw() {
        assertEquals("Tensor[(1, 64, 112, 112), float32]",
                inferText(OP, attrs("strides", ints(2, 2), "padding", ints(3, 3)), f32(1, 3, 224, 224), f32(64, 3, 7, 7)));
        // asymmetric padding: top 1, left 0, bottom 2, right 1
        assertEquals("Tensor[(2, 8, 8, 6), float32]",
                inferText(OP, attrs("padding", ints(1, 0, 2, 1)), f32(2, 4, 8, 7), f32(8, 4, 4, 3)));
        // dilation 2 makes a 3x3 kernel span 5
        assertEquals("Tensor[(1, 8, 6, 6), float32]", inferText(OP, attrs("dilation", ints(2, 2)), f32(1, 4, 10, 10), f32(8, 4, 3, 3)));
        assertEquals("Tensor[(1, 8, 5, 5), int32]",
                inferText(OP, attrs("out_dtype", "int32"), tensor(DType.INT8, 1, 4, 7, 7), tensor(DType.INT8, 8, 4, 3, 3)));
    }

    @Test
    void relationGroupsAndLayouts() {
        assertEquals("Tensor[(1, 32, 56, 56), float32]",
                inferText(OP, attrs("padding", ints(1, 1), "groups", 32), f32(1, 32, 56, 56), f32(32, 1, 3, 3)));
        assertEquals("Tensor[(1, 8, 10, 10), float32]", inferText(OP, attrs("groups", 2), f32(1, 6, 12, 12), f32(8, 3, 3, 3)));
        assertEquals("Tensor[(1, 112, 112, 64), float32]", inferText(OP,
                attrs("strides", ints(2, 2), "padding", ints(3, 3), "data_layout", "NHWC", "kernel_layout", "HWIO"),
                f32(1, 224, 224, 3), f32(7, 7, 3, 64)));
        // NHWC in, NCHW out
        assertEquals("Tensor[(1, 64, 222, 222), float32]",
                inferText(OP, attrs("data_layout", "NHWC", "kernel_layout", "HWIO", "out_layout", "NCHW"), f32(1, 224, 224, 3), f32(3, 3, 3, 64)));
    }

    @Test
    void relationSymbolicAndAny() {
        assertEquals("Tensor[(n, 16, h - 2, w + 1), float32]", inferText(OP, attrs("padding", ints(0, 1)), f32("n", 3, "h", "w"), f32(16, 3, 3, 2)));
        assertEquals("Tensor[(n, 16, (h - 1) / 2 + 1, (w - 1) / 2 + 1), float32]",
                inferText(OP, attrs("strides", ints(2, 2), "padding", ints(1, 1)), f32("n", 3, "h", "w"), f32(16, 3, 3, 3)));
        assertEquals("Tensor[(?, 16, ?, 30), float32]", inferText(OP, attrs(), f32("?", 3, "?", 32), f32(16, 3, 3, 3)));
        // channel count unknown: checked at run time, not rejected now
        assertEquals("Tensor[(1, 16, 30, 30), float32]", inferText(OP, attrs(), f32(1, "?", 32, 32), f32(16, 3, 3, 3)));
    }

    @Test
    void relationDefersAndInfersWeight() {
        assertTrue(defers(OP, attrs(), hole(), f32(16, 3, 3, 3)));
        assertTrue(defers(OP, attrs(), f32(1, 3, 8, 8), hole()));
        // channels + kernel_size determine the weight, as in TVM
        assertEquals("Tensor[(1, 16, 6, 6), float32]",
                inferText(OP, attrs("channels", 16, "kernel_size", ints(3, 3)), f32(1, 3, 8, 8), hole()));
    }

    @Test
    void relationErrors() {
        assertEquals("nn.conv2d: input channels 3 (data) do not match weight (16, 4, 3, 3) with groups=1",
                relationError(OP, attrs(), f32(1, 3, 8, 8), f32(16, 4, 3, 3)));
        assertEquals("nn.conv2d: input channels 8 (data) do not match weight (16, 2, 3, 3) with groups=2",
                relationError(OP, attrs("groups", 2), f32(1, 8, 8, 8), f32(16, 2, 3, 3)));
        assertEquals("nn.conv2d: output channels 16 of weight (16, 1, 3, 3) are not divisible by groups=3",
                relationError(OP, attrs("groups", 3), f32(1, 3, 8, 8), f32(16, 1, 3, 3)));
        assertEquals("nn.conv2d: output height would be 0: input 2 + padding 0 is smaller than the dilated kernel 3",
                relationError(OP, attrs(), f32(1, 3, 2, 8), f32(16, 3, 3, 3)));
        assertEquals("nn.conv2d: channels=8 does not match weight (16, 3, 3, 3)",
                relationError(OP, attrs("channels", 8), f32(1, 3, 8, 8), f32(16, 3, 3, 3)));
        assertEquals("nn.conv2d: data must have rank 4, got Tensor[(3, 8, 8), float32]",
                relationError(OP, attrs(), f32(3, 8, 8), f32(16, 3, 3, 3)));
        assertEquals("nn.conv2d: data_layout must be a permutation of NCHW, got \"NCHW4c\"",
                relationError(OP, attrs("data_layout", "NCHW4c"), f32(1, 3, 8, 8), f32(16, 3, 3, 3)));
        assertEquals("nn.conv2d: unknown attribute 'stride'", relationError(OP, attrs("stride", ints(2, 2)), f32(1, 3, 8, 8), f32(16, 3, 3, 3)));
        assertEquals("nn.conv2d: attribute 'padding' must have 1, 2 or 4 values, got 3",
                relationError(OP, attrs("padding", ints(1, 1, 1)), f32(1, 3, 8, 8), f32(16, 3, 3, 3)));
        assertEquals("nn.conv2d: attribute 'strides' must be positive, got [0, 1]",
                relationError(OP, attrs("strides", ints(0, 1)), f32(1, 3, 8, 8), f32(16, 3, 3, 3)));
    }

    @Test
    void kernelByHand() {
        NDArray x = arr(new int[] {1, 1, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9);
        NDArray w = arr(new int[] {1, 1, 2, 2}, 1, 0, 0, 1);
        assertValues(run1(OP, attrs(), x, w), new int[] {1, 1, 2, 2}, 6, 8, 12, 14);
        // padding 1 and stride 2: only the bottom-right tap reaches the image at the corners
        assertValues(run1(OP, attrs("padding", ints(1, 1), "strides", ints(2, 2)), x, w), new int[] {1, 1, 2, 2}, 1, 3, 7, 14);
        // two groups: channel 0 doubled, channel 1 negated
        NDArray x2 = arr(new int[] {1, 2, 1, 2}, 1, 2, 3, 4);
        NDArray w2 = arr(new int[] {2, 1, 1, 1}, 2, -1);
        assertValues(run1(OP, attrs("groups", 2), x2, w2), new int[] {1, 2, 1, 2}, 2, 4, -3, -4);
    }

    @Test
    void kernelIntegerWithOutDtype() {
        NDArray x = arr(DType.INT8, new int[] {1, 1, 2, 2}, 100, 100, 100, 100);
        NDArray w = arr(DType.INT8, new int[] {1, 1, 2, 2}, 100, 100, 100, 100);
        assertValues(run1(OP, attrs("out_dtype", "int32"), x, w), new int[] {1, 1, 1, 1}, 40000);
    }

    /** n, c, h, w, o, kh, kw, groups, sh, sw, dh, dw, pt, pl, pb, pr */
    private static final int[][] CASES = {
            {1, 3, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0},
            {2, 5, 9, 8, 7, 3, 2, 1, 2, 1, 1, 1, 1, 0, 2, 1},
            {1, 4, 10, 11, 6, 3, 3, 2, 1, 2, 2, 1, 2, 2, 2, 2},
            {1, 6, 8, 8, 12, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1},   // depthwise, multiplier 2
            {2, 8, 9, 9, 8, 5, 5, 8, 2, 2, 2, 1, 3, 2, 1, 0},    // depthwise, strided, dilated
            {1, 16, 20, 20, 33, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, // pointwise, no im2col
            {1, 20, 15, 17, 35, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, // big enough to run in parallel
            {1, 9, 6, 6, 3, 1, 1, 3, 3, 3, 1, 1, 0, 0, 0, 0},     // strided 1x1
            {1, 3, 5, 5, 2, 3, 3, 1, 1, 1, 1, 1, 4, 4, 4, 4},     // padding larger than the kernel
            {1, 300, 7, 7, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // reduction longer than one K block
    };

    @Test
    void fastKernelMatchesNaiveLoopNchw() {
        Random rnd = new Random(7);
        for (int[] c : CASES) {
            NDArray x = random(rnd, c[0], c[1], c[2], c[3]);
            NDArray w = random(rnd, c[4], c[1] / c[7], c[5], c[6]);
            NDArray got = run1(OP, attrs("groups", c[7], "strides", ints(c[8], c[9]), "dilation", ints(c[10], c[11]),
                    "padding", ints(c[12], c[13], c[14], c[15])), x, w);
            NDArray want = naive(x, w, c[7], c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15]);
            assertClose(want, got, 1e-4);
        }
    }

    @Test
    void fastKernelMatchesNaiveLoopNhwc() {
        Random rnd = new Random(11);
        for (int[] c : CASES) {
            NDArray x = random(rnd, c[0], c[1], c[2], c[3]);
            NDArray w = random(rnd, c[4], c[1] / c[7], c[5], c[6]);
            NDArray got = run1(OP, attrs("groups", c[7], "strides", ints(c[8], c[9]), "dilation", ints(c[10], c[11]),
                    "padding", ints(c[12], c[13], c[14], c[15]), "data_layout", "NHWC", "kernel_layout", "HWIO"),
                    reorder(x, new int[] {0, 2, 3, 1}), reorder(w, new int[] {2, 3, 1, 0}));
            NDArray want = reorder(naive(x, w, c[7], c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15]), new int[] {0, 2, 3, 1});
            assertClose(want, got, 1e-4);
        }
    }

    /** The textbook 7-loop convolution in double, NCHW/OIHW; positions outside the image read 0. */
    static NDArray naive(NDArray x, NDArray w, int groups, int sh, int sw, int dh, int dw, int pt, int pl, int pb, int pr) {
        int n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
        int o = w.dim(0), cg = w.dim(1), kh = w.dim(2), kw = w.dim(3);
        int oh = (h + pt + pb - dh * (kh - 1) - 1) / sh + 1, ow = (wd + pl + pr - dw * (kw - 1) - 1) / sw + 1;
        int og = o / groups;
        NDArray out = NDArray.zeros(DType.FLOAT32, n, o, oh, ow);
        for (int b = 0; b < n; b++)
            for (int oc = 0; oc < o; oc++)
                for (int y = 0; y < oh; y++)
                    for (int xx = 0; xx < ow; xx++) {
                        double acc = 0;
                        for (int ic = 0; ic < cg; ic++)
                            for (int r = 0; r < kh; r++)
                                for (int s = 0; s < kw; s++) {
                                    int ih = y * sh - pt + r * dh, iw = xx * sw - pl + s * dw;
                                    if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                                    int cin = (oc / og) * cg + ic;
                                    acc += x.getDouble(((b * c + cin) * h + ih) * wd + iw) * w.getDouble(((oc * cg + ic) * kh + r) * kw + s);
                                }
                        out.setDouble(((b * o + oc) * oh + y) * ow + xx, acc);
                    }
        return out;
    }

    /** {@code out[i] = in[axes[i]]}, written with explicit index arithmetic. */
    static NDArray reorder(NDArray in, int[] axes) {
        int[] s = in.shape();
        int[] os = {s[axes[0]], s[axes[1]], s[axes[2]], s[axes[3]]};
        NDArray out = NDArray.zeros(in.dtype(), os);
        int[] idx = new int[4];
        for (idx[0] = 0; idx[0] < s[0]; idx[0]++)
            for (idx[1] = 0; idx[1] < s[1]; idx[1]++)
                for (idx[2] = 0; idx[2] < s[2]; idx[2]++)
                    for (idx[3] = 0; idx[3] < s[3]; idx[3]++) {
                        int src = ((idx[0] * s[1] + idx[1]) * s[2] + idx[2]) * s[3] + idx[3];
                        int dst = ((idx[axes[0]] * os[1] + idx[axes[1]]) * os[2] + idx[axes[2]]) * os[3] + idx[axes[3]];
                        out.setDouble(dst, in.getDouble(src));
                    }
        return out;
    }
}
