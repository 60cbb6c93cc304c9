package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Conv2DTransposeTest {
    private static final String OP = "nn.conv2d_transpose";

    @Test
    void relation() {
        assertEquals("Tensor[(1, 4, 16, 16), float32]", inferText(OP,
                attrs("strides", ints(2, 2), "padding", ints(1, 1), "output_padding", ints(1, 1)), f32(1, 3, 8, 8), f32(3, 4, 3, 3)));
        assertEquals("Tensor[(1, 6, 10, 10), float32]", inferText(OP, attrs("groups", 3), f32(1, 3, 8, 8), f32(3, 2, 3, 3)));
        assertEquals("Tensor[(n, 4, 2 * h, w + 2), float32]",
                inferText(OP, attrs("strides", ints(2, 1), "padding", ints(1, 0), "output_padding", ints(1, 0)), f32("n", 3, "h", "w"), f32(3, 4, 3, 3)));
        assertEquals("Tensor[(1, 4, 10, 10), float32]", inferText(OP, attrs("channels", 4, "kernel_size", ints(3, 3)), f32(1, 3, 8, 8), hole()));
        assertTrue(defers(OP, attrs(), f32(1, 3, 8, 8), hole()));
        assertEquals("nn.conv2d_transpose: input channels 3 (data) do not match weight (4, 4, 3, 3) with groups=1",
                relationError(OP, attrs(), f32(1, 3, 8, 8), f32(4, 4, 3, 3)));
        assertEquals("nn.conv2d_transpose: output_padding [2, 2] must be smaller than strides [2, 2] or dilation",
                relationError(OP, attrs("strides", ints(2, 2), "output_padding", ints(2, 2)), f32(1, 3, 8, 8), f32(3, 4, 3, 3)));
        assertEquals("nn.conv2d_transpose: unknown attribute 'out_padding'",
                relationError(OP, attrs("out_padding", ints(1, 1)), f32(1, 3, 8, 8), f32(3, 4, 3, 3)));
    }

    @Test
    void kernelByHand() {
        NDArray x = arr(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        NDArray w = arr(new int[] {1, 1, 2, 2}, 1, 1, 1, 1);
        assertValues(run1(OP, attrs(), x, w), new int[] {1, 1, 3, 3}, 1, 3, 2, 4, 10, 6, 3, 7, 4);
        assertValues(run1(OP, attrs("strides", ints(2, 2)), x, w), new int[] {1, 1, 4, 4}, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4);
        assertValues(run1(OP, attrs("strides", ints(2, 2), "padding", ints(1, 1)), x, w), new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        assertValues(run1(OP, attrs("strides", ints(2, 2), "output_padding", ints(1, 1), "padding", ints(1, 1)), x, w),
                new int[] {1, 1, 3, 3}, 1, 2, 2, 3, 4, 4, 3, 4, 4);
        NDArray xi = arr(DType.INT32, new int[] {1, 1, 1, 1}, 3);
        NDArray wi = arr(DType.INT32, new int[] {1, 1, 1, 2}, 2, 5);
        assertValues(run1(OP, attrs(), xi, wi), new int[] {1, 1, 1, 2}, 6, 15);
    }

    @Test
    void matchesNaiveScatter() {
        Random rnd = new Random(13);
        // n, c, h, w, og, kh, kw, groups, sh, sw, dh, dw, pt, pl, pb, pr, oph, opw
        int[][] cases = {
                {1, 2, 3, 4, 3, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0},
                {2, 4, 5, 5, 3, 3, 2, 2, 2, 3, 1, 1, 1, 0, 2, 1, 1, 2},
                {1, 6, 4, 4, 1, 3, 3, 6, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0},
                {1, 40, 9, 9, 20, 4, 4, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0},
        };
        for (int[] c : cases) {
            NDArray x = random(rnd, c[0], c[1], c[2], c[3]);
            NDArray w = random(rnd, c[1], c[4], c[5], c[6]);
            NDArray got = run1(OP, attrs("groups", c[7], "strides", ints(c[8], c[9]), "dilation", ints(c[10], c[11]),
                    "padding", ints(c[12], c[13], c[14], c[15]), "output_padding", ints(c[16], c[17])), x, w);
            int g = c[7], og = c[4], cg = c[1] / g, kh = c[5], kw = c[6];
            int oh = (c[2] - 1) * c[8] - c[12] - c[14] + c[10] * (kh - 1) + c[16] + 1;
            int ow = (c[3] - 1) * c[9] - c[13] - c[15] + c[11] * (kw - 1) + c[17] + 1;
            NDArray want = NDArray.zeros(DType.FLOAT32, c[0], og * g, oh, ow);
            for (int b = 0; b < c[0]; b++)
                for (int ic = 0; ic < c[1]; ic++)
                    for (int ih = 0; ih < c[2]; ih++)
                        for (int iw = 0; iw < c[3]; iw++)
                            for (int oc = 0; oc < og; oc++)
                                for (int r = 0; r < kh; r++)
                                    for (int s = 0; s < kw; s++) {
                                        int y = ih * c[8] - c[12] + r * c[10], xx = iw * c[9] - c[13] + s * c[11];
                                        if (y < 0 || y >= oh || xx < 0 || xx >= ow) continue;
                                        int outC = (ic / cg) * og + oc;
                                        int o = ((b * og * g + outC) * oh + y) * ow + xx;
                                        want.setDouble(o, want.getDouble(o) + x.getDouble(((b * c[1] + ic) * c[2] + ih) * c[3] + iw)
                                                * w.getDouble(((ic * og + oc) * kh + r) * kw + s));
                                    }
            assertClose(want, got, 1e-4);
        }
    }

    @Test
    void conv3dTransposeRelation() {
        String op = "nn.conv3d_transpose";
        assertEquals("Tensor[(1, 3, 5, 6, 7), float32]", inferText(op, attrs(), f32(1, 2, 3, 4, 5), f32(2, 3, 3, 3, 3)));
        assertEquals("Tensor[(1, 4, 8, 8, 8), float32]", inferText(op,
                attrs("strides", ints(2, 2, 2), "padding", ints(1), "output_padding", ints(1, 1, 1)), f32(1, 3, 4, 4, 4), f32(3, 4, 3, 3, 3)));
        assertEquals("Tensor[(1, 6, 3, 3, 3), float32]", inferText(op, attrs("groups", 3), f32(1, 3, 1, 1, 1), f32(3, 2, 3, 3, 3)));
        assertEquals("Tensor[(1, 4, 3, 3, 3), float32]", inferText(op, attrs("channels", 4, "kernel_size", ints(3, 3, 3)), f32(1, 3, 1, 1, 1), hole()));
        assertTrue(defers(op, attrs(), f32(1, 3, 8, 8, 8), hole()));
        assertEquals("nn.conv3d_transpose: input channels 3 (data) do not match weight (4, 4, 3, 3, 3) with groups=1",
                relationError(op, attrs(), f32(1, 3, 8, 8, 8), f32(4, 4, 3, 3, 3)));
        assertEquals("nn.conv3d_transpose: only data_layout NCDHW, kernel_layout IODHW are supported, got NDHWC, IODHW",
                relationError(op, attrs("data_layout", "NDHWC"), f32(1, 8, 8, 8, 3), f32(3, 4, 3, 3, 3)));
        assertEquals("nn.conv3d_transpose: output depth would be -2 (padding 4 too large)",
                relationError(op, attrs("padding", ints(2, 0, 0)), f32(1, 3, 1, 1, 1), f32(3, 4, 2, 1, 1)));
    }

    @Test
    void conv3dTransposeKernel() {
        String op = "nn.conv3d_transpose";
        // depth only: x = [1, 2], taps [10, 1]; stride 1 overlaps the middle, stride 2 interleaves
        NDArray x = arr(new int[] {1, 1, 2, 1, 1}, 1, 2);
        NDArray w = arr(new int[] {1, 1, 2, 1, 1}, 10, 1);
        assertValues(run1(op, attrs(), x, w), new int[] {1, 1, 3, 1, 1}, 10, 21, 2);
        assertValues(run1(op, attrs("strides", ints(2, 1, 1)), x, w), new int[] {1, 1, 4, 1, 1}, 10, 1, 20, 2);
        assertValues(run1(op, attrs("padding", ints(1, 0, 0, 0, 0, 0)), x, w), new int[] {1, 1, 2, 1, 1}, 21, 2);
        // a unit depth reproduces nn.conv2d_transpose with strides, dilation, padding, groups and output_padding
        Random rnd = new Random(7);
        // n, c, h, w, og, kh, kw, groups, sh, sw, dh, dw, pt, pl, pb, pr, oph, opw
        int[][] cases = {
                {1, 2, 3, 4, 3, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0},
                {2, 4, 5, 5, 3, 3, 2, 2, 2, 3, 1, 1, 1, 0, 2, 1, 1, 2},
                {1, 6, 4, 4, 1, 3, 3, 6, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0},
        };
        for (int[] c : cases) {
            NDArray x2 = random(rnd, c[0], c[1], c[2], c[3]);
            NDArray w2 = random(rnd, c[1], c[4], c[5], c[6]);
            NDArray want = run1(OP, attrs("groups", c[7], "strides", ints(c[8], c[9]), "dilation", ints(c[10], c[11]),
                    "padding", ints(c[12], c[13], c[14], c[15]), "output_padding", ints(c[16], c[17])), x2, w2);
            NDArray x3 = NDArray.fromDoubles(DType.FLOAT32, new int[] {c[0], c[1], 1, c[2], c[3]}, doubles(x2));
            NDArray w3 = NDArray.fromDoubles(DType.FLOAT32, new int[] {c[1], c[4], 1, c[5], c[6]}, doubles(w2));
            NDArray got = run1(op, attrs("groups", c[7], "strides", ints(1, c[8], c[9]), "dilation", ints(1, c[10], c[11]),
                    "padding", ints(0, c[12], c[13], 0, c[14], c[15]), "output_padding", ints(0, c[16], c[17])), x3, w3);
            int[] s = want.shape();
            assertClose(NDArray.fromDoubles(DType.FLOAT32, new int[] {s[0], s[1], 1, s[2], s[3]}, doubles(want)), got, 1e-4);
        }
    }

    private static double[] doubles(NDArray a) {
        double[] v = new double[a.size()];
        for (int i = 0; i < v.length; i++) v[i] = a.getDouble(i);
        return v;
    }
}
