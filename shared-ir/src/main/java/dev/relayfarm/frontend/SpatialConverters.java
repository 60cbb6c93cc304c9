package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * ONNX operators that move values between positions of an image by a pattern known at import time:
 * Col2Im and MaxUnpool. Col2Im's pattern becomes a constant index table and the operator a {@code take}
 * (a gather) followed by a sum; MaxUnpool is a {@code scatter_elements} into zeros. The compiled path
 * needs no operator of its own.
 */
final class SpatialConverters {
    /** The largest index table (in elements) an operator may build. */
    static final long MAX_TABLE = 1L << 24;

    private SpatialConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("Col2Im", SpatialConverters::col2im);
        b.add("MaxUnpool", SpatialConverters::maxUnpool);
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

    /** Row-major unravel of {@code index} over {@code dims} into {@code out}. */
    static void unravel(long index, long[] dims, long[] out) {
        for (int i = dims.length - 1; i >= 0; i--) {
            out[i] = index % dims[i];
            index /= dims[i];
        }
    }
}
