package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.NDArray;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * nn.contrib_conv2d_winograd_weight_transform and nn.contrib_conv2d_winograd_NCHWc: relations, and the pair
 * against nn.conv2d (3x3, stride 1) on random data, F(2x2) and F(4x4), outputs that are and are not multiples
 * of the tile, padding 0, 1 and asymmetric, blocked and plain layouts.
 */
class WinogradConv2DTest {
    private static final String WT = "nn.contrib_conv2d_winograd_weight_transform", OP = "nn.contrib_conv2d_winograd_NCHWc";

    @Test
    void relations() {
        assertEquals("Tensor[(6, 6, 2, 4, 8, 16), float32]", inferText(WT, attrs("tile_size", 4, "kernel_layout", "OIHW8i16o"), f32(2, 4, 3, 3, 8, 16)));
        assertEquals("Tensor[(4, 4, 8, 5, 1, 1), float32]", inferText(WT, attrs("tile_size", 2), f32(8, 5, 3, 3)));
        assertEquals("Tensor[(1, 2, 14, 14, 16), float32]", inferText(OP,
                attrs("tile_size", 4, "padding", ints(1, 1), "data_layout", "NCHW8c", "out_layout", "NCHW16c"), f32(1, 4, 14, 14, 8), f32(6, 6, 2, 4, 8, 16)));
        assertEquals("Tensor[(2, 8, 5, 3), float32]", inferText(OP, attrs("tile_size", 2, "data_layout", "NCHW"), f32(2, 5, 7, 5), f32(4, 4, 8, 5, 1, 1)));
    }

    @Test
    void relationErrors() {
        assertEquals(WT + ": the kernel must be 3x3, got weight (8, 5, 5, 5) in OIHW", relationError(WT, attrs(), f32(8, 5, 5, 5)));
        assertEquals(WT + ": tile_size must be 2 or 4, got 3", relationError(WT, attrs("tile_size", 3), f32(8, 5, 3, 3)));
        assertEquals(OP + ": input channels 32 (data (1, 4, 8, 8, 8)) do not match the transformed weight (6, 6, 2, 2, 8, 16) (16)",
                relationError(OP, attrs("tile_size", 4), f32(1, 4, 8, 8, 8), f32(6, 6, 2, 2, 8, 16)));
        assertEquals(OP + ": the transformed weight must be static [4, 4, O/oc, I/ic, ic, oc] for tile_size=2, got (6, 6, 2, 4, 8, 16)",
                relationError(OP, attrs("tile_size", 2), f32(1, 4, 8, 8, 8), f32(6, 6, 2, 4, 8, 16)));
    }

    /** n, c, h, w, o, pad top, left, bottom, right, ic block, oc block */
    private static final int[][] CASES = {
            {1, 16, 8, 8, 16, 1, 1, 1, 1, 8, 8},
            {2, 8, 9, 7, 16, 1, 1, 1, 1, 4, 16},   // 9x7 output: neither a multiple of 2 nor of 4
            {1, 8, 10, 11, 8, 0, 0, 0, 0, 8, 8},   // 8x9 output, no padding
            {1, 4, 6, 6, 8, 0, 1, 2, 0, 1, 1},     // plain NCHW, asymmetric padding
    };

    @Test
    void matchesConv2d() {
        Random rnd = new Random(18);
        for (int m : new int[] {2, 4}) {
            for (int[] c : CASES) {
                int n = c[0], ch = c[1], h = c[2], w = c[3], o = c[4], ib = c[9], ob = c[10];
                NDArray x = random(rnd, n, ch, h, w);
                NDArray wt = random(rnd, o, ch, 3, 3);
                int[] pad = {c[5], c[6], c[7], c[8]};
                NDArray want = run1("nn.conv2d", attrs("padding", ints(pad)), x, wt);
                String dl = ib == 1 ? "NCHW" : "NCHW" + ib + "c", kl = ib == 1 ? "OIHW" : "OIHW" + ib + "i" + ob + "o", ol = ob == 1 ? "NCHW" : "NCHW" + ob + "c";
                NDArray u = run1(WT, attrs("tile_size", m, "kernel_layout", kl), ib == 1 ? wt : Conv2DNCHWcTest.packKernel(wt, ib, ob));
                NDArray got = run1(OP, attrs("tile_size", m, "padding", ints(pad), "data_layout", dl, "out_layout", ol),
                        ib == 1 ? x : Conv2DNCHWcTest.packData(x, ib), u);
                assertClose(ob == 1 ? want : Conv2DNCHWcTest.packData(want, ob), got, 1e-4);
            }
        }
    }
}
