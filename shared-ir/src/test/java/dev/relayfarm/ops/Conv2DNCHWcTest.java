package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * nn.contrib_conv2d_NCHWc: the relation in blocked layouts, and the kernel against nn.conv2d on the
 * same data packed by explicit index arithmetic (which also checks layout_transform's blocking of
 * NCHW[x]c and OIHW[x]i[y]o).
 */
class Conv2DNCHWcTest {
    private static final String OP = "nn.contrib_conv2d_NCHWc";

    @Test
    void relation() {
        assertEquals("Tensor[(1, 4, 6, 6, 4), float32]", inferText(OP,
                attrs("data_layout", "NCHW8c", "kernel_layout", "OIHW8i4o", "out_layout", "NCHW4c"),
                f32(1, 2, 8, 8, 8), f32(4, 2, 3, 3, 8, 4)));
        // out_layout defaults to the data layout; padding and stride as conv2d
        assertEquals("Tensor[(2, 2, 4, 4, 8), float32]", inferText(OP,
                attrs("data_layout", "NCHW8c", "kernel_layout", "OIHW8i8o", "padding", ints(1, 1), "strides", ints(2, 2)),
                f32(2, 2, 8, 8, 8), f32(2, 2, 3, 3, 8, 8)));
        // an unblocked input with few channels (NCHW3c) feeding 16-blocked outputs
        assertEquals("Tensor[(1, 1, 5, 5, 16), float32]", inferText(OP,
                attrs("data_layout", "NCHW3c", "kernel_layout", "OIHW3i16o", "out_layout", "NCHW16c", "channels", 16, "kernel_size", ints(3, 3)),
                f32(1, 1, 7, 7, 3), f32(1, 1, 3, 3, 3, 16)));
        assertEquals("Tensor[(n, 2, 6, 6, 8), int32]", inferText(OP,
                attrs("data_layout", "NCHW8c", "kernel_layout", "OIHW8i8o", "out_dtype", "int32"),
                tensor(DType.INT8, "n", 2, 8, 8, 8), tensor(DType.INT8, 2, 2, 3, 3, 8, 8)));
        assertTrue(defers(OP, attrs(), hole(), f32(2, 2, 3, 3, 8, 8)));
    }

    @Test
    void relationErrors() {
        assertEquals("nn.contrib_conv2d_NCHWc: input channels 16 (data (1, 2, 8, 8, 8)) do not match weight (2, 1, 3, 3, 8, 8) (8 per group) with groups=1",
                relationError(OP, attrs(), f32(1, 2, 8, 8, 8), f32(2, 1, 3, 3, 8, 8)));
        assertEquals("nn.contrib_conv2d_NCHWc: data (1, 2, 8, 8, 4): block axis 8c of NCHW8c has size 4",
                relationError(OP, attrs(), f32(1, 2, 8, 8, 4), f32(2, 1, 3, 3, 8, 8)));
        assertEquals("nn.contrib_conv2d_NCHWc: data (1, 16, 8, 8) must have rank 5 for layout NCHW8c",
                relationError(OP, attrs(), f32(1, 16, 8, 8), f32(2, 2, 3, 3, 8, 8)));
        assertEquals("nn.contrib_conv2d_NCHWc: data_layout may only split C, got \"NCHW8c4h\"",
                relationError(OP, attrs("data_layout", "NCHW8c4h"), f32(1, 2, 2, 8, 8, 4), f32(2, 2, 3, 3, 8, 8)));
        assertEquals("nn.contrib_conv2d_NCHWc: kernel_layout must have the primal axes of OIHW, got \"NCHW8c\"",
                relationError(OP, attrs("kernel_layout", "NCHW8c"), f32(1, 2, 8, 8, 8), f32(2, 2, 3, 3, 8)));
        assertEquals("nn.contrib_conv2d_NCHWc: output: axis C of size 12 does not divide into blocks of 8 for NCHW8c",
                relationError(OP, attrs("kernel_layout", "OIHW8i4o"), f32(1, 2, 8, 8, 8), f32(3, 2, 3, 3, 8, 4)));
        assertEquals("nn.contrib_conv2d_NCHWc: data_layout: bad layout \"NCHWc\": expected an upper-case axis or a block like 8c at position 4",
                relationError(OP, attrs("data_layout", "NCHWc"), f32(1, 2, 8, 8, 8), f32(2, 2, 3, 3, 8, 8)));
        assertEquals("nn.contrib_conv2d_NCHWc: unknown attribute 'layout'",
                relationError(OP, attrs("layout", "NCHW8c"), f32(1, 2, 8, 8, 8), f32(2, 2, 3, 3, 8, 8)));
    }

    /** n, c, h, w, o, k, groups, stride, pad, ic block, oc block */
    private static final int[][] CASES = {
            {1, 16, 7, 7, 16, 3, 1, 1, 1, 8, 8},
            {2, 8, 9, 8, 32, 3, 1, 2, 0, 4, 16},
            {1, 3, 6, 6, 8, 3, 1, 1, 1, 3, 8},
            {1, 16, 5, 5, 8, 1, 2, 1, 0, 8, 4},   // two groups, blocks inside a group
    };

    @Test
    void kernelMatchesConv2dOnPackedData() {
        Random rnd = new Random(5);
        for (int[] c : CASES) {
            int n = c[0], ch = c[1], h = c[2], w = c[3], o = c[4], k = c[5], groups = c[6], ib = c[9], ob = c[10];
            NDArray x = random(rnd, n, ch, h, w);
            NDArray wt = random(rnd, o, ch / groups, k, k);
            Object[] common = {"strides", ints(c[7], c[7]), "padding", ints(c[8], c[8]), "groups", groups};
            NDArray want = run1("nn.conv2d", attrs(common), x, wt);
            String dl = "NCHW" + ib + "c", kl = "OIHW" + ib + "i" + ob + "o", ol = "NCHW" + ob + "c";
            Object[] blocked = java.util.stream.Stream.concat(java.util.Arrays.stream(common),
                    java.util.stream.Stream.of("data_layout", dl, "kernel_layout", kl, "out_layout", ol)).toArray();
            NDArray got = run1(OP, attrs(blocked), packData(x, ib), packKernel(wt, ib, ob));
            assertClose(packData(want, ob), got, 1e-4);
            // layout_transform packs the same way
            assertClose(packData(x, ib), run1("layout_transform", attrs("src_layout", "NCHW", "dst_layout", dl), x), 0);
            assertClose(packKernel(wt, ib, ob), run1("layout_transform", attrs("src_layout", "OIHW", "dst_layout", kl), wt), 0);
            assertClose(wt, run1("layout_transform", attrs("src_layout", kl, "dst_layout", "OIHW"), packKernel(wt, ib, ob)), 0);
        }
    }

    /** NCHW -> NCHW[b]c: out[n][c / b][h][w][c % b] = in[n][c][h][w]. */
    static NDArray packData(NDArray x, int b) {
        int n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
        NDArray out = NDArray.zeros(x.dtype(), n, c / b, h, w, b);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < c; j++)
                for (int y = 0; y < h; y++)
                    for (int z = 0; z < w; z++)
                        out.setDouble(((((i * (c / b) + j / b) * h + y) * w + z) * b) + j % b, x.getDouble(((i * c + j) * h + y) * w + z));
        return out;
    }

    /** OIHW -> OIHW[ib]i[ob]o: out[o / ob][i / ib][y][x][i % ib][o % ob] = in[o][i][y][x]. */
    static NDArray packKernel(NDArray wt, int ib, int ob) {
        int o = wt.dim(0), in = wt.dim(1), kh = wt.dim(2), kw = wt.dim(3);
        NDArray out = NDArray.zeros(wt.dtype(), o / ob, in / ib, kh, kw, ib, ob);
        for (int a = 0; a < o; a++)
            for (int b = 0; b < in; b++)
                for (int y = 0; y < kh; y++)
                    for (int z = 0; z < kw; z++) {
                        int dst = ((((((a / ob) * (in / ib) + b / ib) * kh + y) * kw + z) * ib + b % ib) * ob) + a % ob;
                        out.setDouble(dst, wt.getDouble(((a * in + b) * kh + y) * kw + z));
                    }
        return out;
    }
}
