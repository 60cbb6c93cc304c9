package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * ONNX operators that move values between positions of an image by a pattern known at import time:
 * Col2Im and MaxUnpool. Col2Im's pattern becomes a constant index table and the operator a {@code take}
 * (a gather) followed by a sum; MaxUnpool is a {@code scatter_elements} into zeros. The compiled path
 * needs no operator of its own. DeformConv samples its input with {@code image.grid_sample} at the
 * offset kernel positions and contracts the samples with the weights by {@code einsum}.
 */
final class SpatialConverters {
    /** The largest index table (in elements) an operator may build. */
    static final long MAX_TABLE = 1L << 24;

    private SpatialConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("Col2Im", SpatialConverters::col2im);
        b.add("MaxUnpool", SpatialConverters::maxUnpool);
        b.add("DeformConv", SpatialConverters::deformConv);
    }

    private static long[] attrOr(OnnxNode n, String name, int rank, long dflt) {
        long[] v = n.attrInts(name);
        if (v == null) {
            v = new long[rank];
            Arrays.fill(v, dflt);
        }
        return v;
    }

    /**
     * Col2Im(input [N, C·∏block, L], image_shape, block_shape) → [N, C, image...]: every column l of the
     * input is one sliding block position; its C·∏block values are added into the image at
     * {@code position·stride − pad_begin + offset·dilation} (values falling into the padding are dropped).
     * Each image pixel gathers the (block offset, position) pairs landing on it from the input flattened
     * to [N·C, ∏block·L] with one zero appended, a pixel with fewer pairs padding its row of the table
     * with that zero; the gathered values are summed.
     */
    private static List<Expr> col2im(OnnxNode n) {
        long[] image = n.constantInts(1, "image_shape"), block = n.constantInts(2, "block_shape");
        int d = image.length;
        if (d == 0 || block.length != d) throw n.unsupported("image_shape and block_shape must have the same length >= 1, got " + image.length + " and " + block.length);
        long[] dil = attrOr(n, "dilations", d, 1), strides = attrOr(n, "strides", d, 1), pads = attrOr(n, "pads", 2 * d, 0);
        if (dil.length != d || strides.length != d || pads.length != 2 * d) {
            throw n.unsupported("dilations and strides need " + d + " values and pads " + 2 * d + ", got " + dil.length + ", " + strides.length + " and " + pads.length);
        }
        for (int i = 0; i < d; i++) {
            if (image[i] < 1 || block[i] < 1 || dil[i] < 1 || strides[i] < 1 || pads[i] < 0 || pads[i + d] < 0) {
                throw n.unsupported("image_shape, block_shape, dilations and strides must be positive and pads non-negative");
            }
        }
        TensorType t = n.inputType(0);
        if (t.rank() != 3) throw n.unsupported("input must be [N, C*prod(block_shape), L], got " + t);
        Dim ck = t.shape().get(1), l = t.shape().get(2);
        if (!ck.isStatic() || !l.isStatic()) throw n.unsupported("input needs static dims 1 and 2, got " + t);
        long k = Arrays.stream(block).reduce(1, Math::multiplyExact);
        if (ck.value() % k != 0) throw n.unsupported("input dim 1 (" + ck.value() + ") is not a multiple of prod(block_shape) = " + k);
        long channels = ck.value() / k;
        long[] blocks = new long[d];
        long positions = 1;
        for (int i = 0; i < d; i++) {
            long span = dil[i] * (block[i] - 1) + 1;
            blocks[i] = (image[i] + pads[i] + pads[i + d] - span) / strides[i] + 1;
            if (blocks[i] < 1) throw n.unsupported("block " + i + " (" + span + " wide) does not fit the padded image dim " + (image[i] + pads[i] + pads[i + d]));
            positions *= blocks[i];
        }
        if (positions != l.value()) throw n.unsupported("input has " + l.value() + " block positions, the image and block shapes give " + positions);
        long pixels = Arrays.stream(image).reduce(1, Math::multiplyExact);
        long columns = k * positions; // the index of the appended zero
        List<List<Long>> sources = new ArrayList<>();
        for (long p = 0; p < pixels; p++) sources.add(new ArrayList<>());
        long[] off = new long[d], pos = new long[d];
        for (long kk = 0; kk < k; kk++) {
            unravel(kk, block, off);
            for (long ll = 0; ll < positions; ll++) {
                unravel(ll, blocks, pos);
                long pixel = 0;
                boolean inside = true;
                for (int i = 0; i < d && inside; i++) {
                    long c = pos[i] * strides[i] - pads[i] + off[i] * dil[i];
                    inside = c >= 0 && c < image[i];
                    pixel = pixel * image[i] + c;
                }
                if (inside) sources.get((int) pixel).add(kk * positions + ll);
            }
        }
        int width = Math.max(1, sources.stream().mapToInt(List::size).max().orElse(0));
        if (pixels * width > MAX_TABLE) throw n.unsupported("the gather table would hold " + pixels * width + " entries, more than " + MAX_TABLE);
        long[] table = new long[Math.toIntExact(pixels * width)];
        for (int p = 0; p < pixels; p++) {
            List<Long> s = sources.get(p);
            for (int j = 0; j < width; j++) table[p * width + j] = j < s.size() ? s.get(j) : columns;
        }
        Expr x = n.input(0);
        Expr flat = n.call("reshape", List.of(x), "newshape", new long[] {-1, columns});
        Expr padded = n.call("nn.pad", List.of(flat, MathConverters.scalar(n, x, 0)), "pad_width", List.of(List.of(0L, 0L), List.of(0L, 1L)),
                "pad_mode", "constant");
        Expr idx = OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[] {(int) pixels, width}, table));
        Expr gathered = n.call("take", List.of(padded, idx), "axis", 1L, "mode", "fast");
        Expr summed = n.call("sum", List.of(gathered), "axis", new long[] {2}, "keepdims", false);
        long[] out = new long[d + 2];
        out[0] = -1;
        out[1] = channels;
        System.arraycopy(image, 0, out, 2, d);
        return List.of(n.call("reshape", List.of(summed), "newshape", out));
    }

    /**
     * MaxUnpool(X [N, C, spatial...], I, output_shape?) writes each X value at its flat index I (as
     * MaxPool's Indices output gives them: over the whole NC... tensor, row-major) into zeros of the
     * output shape: output_shape when given, else per spatial dim (in − 1)·stride + kernel − pads.
     */
    private static List<Expr> maxUnpool(OnnxNode n) {
        TensorType t = n.inputType(0);
        int rank = t.rank();
        if (rank < 3 || !t.isStatic()) throw n.unsupported("X must be a static [N, C, spatial...] tensor, got " + t);
        if (!n.inputType(1).shape().equals(t.shape())) throw n.unsupported("I " + n.inputType(1) + " must have X's shape " + t);
        if (!n.inputType(1).dtype().isInteger()) throw n.unsupported("I must hold integer indices, got " + n.inputType(1).dtype());
        int d = rank - 2;
        long[] kernel = n.attrInts("kernel_shape");
        if (kernel == null || kernel.length != d) throw n.unsupported("attribute 'kernel_shape' must have " + d + " values");
        long[] strides = attrOr(n, "strides", d, 1), pads = attrOr(n, "pads", 2 * d, 0);
        if (strides.length != d || pads.length != 2 * d) throw n.unsupported("strides need " + d + " values and pads " + 2 * d);
        int[] in = t.staticShape();
        long[] out = new long[rank];
        out[0] = in[0];
        out[1] = in[1];
        for (int i = 0; i < d; i++) out[i + 2] = (in[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + d];
        long total = 1;
        for (long v : out) {
            if (v < 1) throw n.unsupported("the output shape " + Arrays.toString(out) + " has an empty dim");
            total = Math.multiplyExact(total, v);
        }
        if (total > MAX_TABLE) throw n.unsupported("the output would hold " + total + " values, more than " + MAX_TABLE);
        Expr zeros = n.call("zeros", List.of(), "shape", new long[] {total}, "dtype", t.dtype().toString());
        Expr idx = n.call("reshape", List.of(n.input(1)), "newshape", new long[] {-1});
        Expr values = n.call("reshape", List.of(n.input(0)), "newshape", new long[] {-1});
        Expr y = n.call("reshape", List.of(n.call("scatter_elements", List.of(zeros, idx, values), "axis", 0L, "reduction", "update")),
                "newshape", out);
        if (!n.hasInput(2)) return List.of(y);
        // The indices address the default output; a larger output_shape holds it at the same coordinates, zeros after it
        // (what ONNX's reference and test data do).
        long[] given = n.constantInts(2, "output_shape");
        if (given.length != rank) throw n.unsupported("output_shape has " + given.length + " values for rank " + rank);
        List<List<Long>> pad = new ArrayList<>();
        boolean padding = false;
        for (int i = 0; i < rank; i++) {
            if (given[i] < out[i] || i < 2 && given[i] != out[i]) {
                throw n.unsupported("output_shape " + Arrays.toString(given) + " must keep N and C and not be smaller than the default output "
                        + Arrays.toString(out));
            }
            pad.add(List.of(0L, given[i] - out[i]));
            padding |= given[i] != out[i];
        }
        return List.of(padding ? n.call("nn.pad", List.of(y, MathConverters.scalar(n, y, 0)), "pad_width", pad, "pad_mode", "constant") : y);
    }

    /**
     * DeformConv (2-D): kernel tap (a, b) of output pixel (i, j) reads X bilinearly (zero outside the
     * image) at (i·stride − pad + a·dilation, j·stride − pad + b·dilation) plus its learned offset
     * (one (dy, dx) per offset group, tap and pixel), scaled by the mask when given; the samples are then
     * contracted with the weights per convolution group, and the bias added. The sampling is
     * image.grid_sample with aligned corners on the coordinates normalized to [−1, 1], one call per
     * offset group (the spec's reference does the same through GridSample).
     */
    private static List<Expr> deformConv(OnnxNode n) {
        TensorType xt = n.inputType(0), wt = n.inputType(1), ot = n.inputType(2);
        if (xt.rank() != 4) throw n.unsupported("only 2-D DeformConv (4-D X) is supported, got " + xt);
        if (!wt.isStatic() || !ot.isStatic() || xt.shape().stream().skip(1).anyMatch(d -> !d.isStatic())) {
            throw n.unsupported("X (but its batch), W and offset need static shapes, got " + xt + ", " + wt + ", " + ot);
        }
        int[] w = wt.staticShape(), o = ot.staticShape();
        long c = xt.shape().get(1).value(), h = xt.shape().get(2).value(), wd = xt.shape().get(3).value();
        long group = n.attrInt("group", 1), offGroups = n.attrInt("offset_group", 1);
        long[] kernel = n.attrInts("kernel_shape");
        if (kernel == null) kernel = new long[] {w[2], w[3]};
        if (kernel.length != 2 || kernel[0] != w[2] || kernel[1] != w[3]) throw n.unsupported("kernel_shape " + Arrays.toString(kernel) + " must match W " + wt);
        long[] dil = attrOr(n, "dilations", 2, 1), strides = attrOr(n, "strides", 2, 1), pads = attrOr(n, "pads", 4, 0);
        if (dil.length != 2 || strides.length != 2 || pads.length != 4) throw n.unsupported("dilations and strides need 2 values and pads 4");
        if (group < 1 || offGroups < 1 || c != w[1] * group || w[0] % group != 0 || c % offGroups != 0) {
            throw n.unsupported("group=" + group + " and offset_group=" + offGroups + " do not fit X " + xt + " and W " + wt);
        }
        if (h < 2 || wd < 2) throw n.unsupported("the image must be at least 2x2 (its coordinates are normalized by H − 1 and W − 1), got " + xt);
        long taps = kernel[0] * kernel[1], oh = o[2], ow = o[3];
        if (o[1] != offGroups * taps * 2) throw n.unsupported("offset " + ot + " needs " + offGroups * taps * 2 + " channels (offset_group x taps x 2)");
        long expectH = (h + pads[0] + pads[2] - ((kernel[0] - 1) * dil[0] + 1)) / strides[0] + 1;
        long expectW = (wd + pads[1] + pads[3] - ((kernel[1] - 1) * dil[1] + 1)) / strides[1] + 1;
        if (oh != expectH || ow != expectW) throw n.unsupported("offset's output size " + oh + "x" + ow + " is not the convolution's " + expectH + "x" + expectW);
        DType dt = xt.dtype();
        double[] baseY = new double[(int) (taps * oh * ow)], baseX = new double[baseY.length];
        for (int a = 0; a < kernel[0]; a++) {
            for (int b = 0; b < kernel[1]; b++) {
                for (int i = 0; i < oh; i++) {
                    for (int j = 0; j < ow; j++) {
                        int at = (int) (((a * kernel[1] + b) * oh + i) * ow + j);
                        baseY[at] = i * strides[0] - pads[0] + a * dil[0];
                        baseX[at] = j * strides[1] - pads[1] + b * dil[1];
                    }
                }
            }
        }
        Expr offset = n.call("reshape", List.of(n.input(2)), "newshape", new long[] {-1, offGroups, taps, 2, oh, ow});
        Expr y = n.call("add", pick(n, offset, 0, 3), OnnxNode.constant(NDArray.fromDoubles(dt, new int[] {(int) taps, (int) oh, (int) ow}, baseY)));
        Expr x = n.call("add", pick(n, offset, 1, 3), OnnxNode.constant(NDArray.fromDoubles(dt, new int[] {(int) taps, (int) oh, (int) ow}, baseX)));
        Expr yn = n.call("subtract", n.call("multiply", y, NormConverters.scalar(dt, 2.0 / (h - 1))), NormConverters.scalar(dt, 1));
        Expr xn = n.call("subtract", n.call("multiply", x, NormConverters.scalar(dt, 2.0 / (wd - 1))), NormConverters.scalar(dt, 1));
        Expr grid = n.call("reshape", List.of(n.call("stack", List.of(new Tuple(List.of(xn, yn))), "axis", 2L)), "newshape",
                new long[] {-1, offGroups, 2, taps * oh, ow}); // [N, G, 2 (x, y), taps·OH, OW]
        Expr mask = n.hasInput(4) ? n.call("reshape", List.of(n.input(4)), "newshape", new long[] {-1, offGroups, taps * oh, ow}) : null;
        long perGroup = c / offGroups;
        List<Expr> parts = new ArrayList<>();
        for (long g = 0; g < offGroups; g++) {
            long[] channels = new long[(int) perGroup];
            for (int k = 0; k < perGroup; k++) channels[k] = g * perGroup + k;
            Expr xg = offGroups == 1 ? n.input(0)
                    : n.call("take", List.of(n.input(0), OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[] {(int) perGroup}, channels))),
                            "axis", 1L, "mode", "fast");
            Expr sampled = n.call("image.grid_sample", List.of(xg, pick(n, grid, g, 1)), "method", "bilinear", "layout", "NCHW",
                    "padding_mode", "zeros", "align_corners", true); // [N, C/G, taps·OH, OW]
            if (mask != null) sampled = n.call("multiply", sampled, n.call("expand_dims", List.of(pick(n, mask, g, 1)), "axis", 1L, "num_newaxis", 1L));
            parts.add(sampled);
        }
        Expr samples = parts.size() == 1 ? parts.getFirst() : n.call("concatenate", List.of(new Tuple(parts)), "axis", 1L);
        long cpg = c / group, ocg = w[0] / group;
        Expr cols = n.call("reshape", List.of(samples), "newshape", new long[] {-1, group, cpg * taps, oh * ow});
        Expr weights = n.call("reshape", List.of(n.input(1)), "newshape", new long[] {group, ocg, cpg * taps});
        Expr out = n.call("einsum", List.of(new Tuple(List.of(weights, cols))), "equation", "goc,ngcl->ngol");
        out = n.call("reshape", List.of(out), "newshape", new long[] {-1, w[0], oh, ow});
        if (n.hasInput(3)) out = n.call("add", out, n.call("reshape", List.of(n.input(3)), "newshape", new long[] {1, w[0], 1, 1}));
        return List.of(out);
    }

    /** Index {@code i} of {@code axis}, the axis removed. */
    private static Expr pick(OnnxNode n, Expr e, long i, long axis) {
        return n.call("take", List.of(e, OnnxNode.constant(NDArray.scalar(i))), "axis", axis, "mode", "fast");
    }

    /** Row-major unravel of {@code index} over {@code dims} into {@code out}. */
    static void unravel(long index, long[] dims, long[] out) {
        for (int i = dims.length - 1; i >= 0; i--) {
            out[i] = index % dims[i];
            index /= dims[i];
        }
    }
}
