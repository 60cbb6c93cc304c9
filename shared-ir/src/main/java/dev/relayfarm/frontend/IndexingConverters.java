package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.Arrays;
import java.util.List;

/**
 * ONNX scatter/gather-by-index and block-rearranging operators: ScatterElements (and its opset &le; 10
 * name Scatter), ScatterND, GatherND, TensorScatter, DepthToSpace and SpaceToDepth.
 */
final class IndexingConverters {
    private IndexingConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("ScatterElements", IndexingConverters::scatterElements);
        b.add("Scatter", IndexingConverters::scatterElements);
        b.add("ScatterND", n -> List.of(n.call("scatter_nd", List.of(n.input(0), indexColumnsFirst(n, 1), n.input(2)),
                "mode", reduction(n))));
        b.add("GatherND", n -> List.of(n.call("gather_nd", List.of(n.input(0), indexColumnsFirst(n, 1)),
                "batch_dims", n.attrInt("batch_dims", 0))));
        b.add("TensorScatter", IndexingConverters::tensorScatter);
        b.add("DepthToSpace", IndexingConverters::depthToSpace);
        b.add("SpaceToDepth", IndexingConverters::spaceToDepth);
    }

    private static List<Expr> scatterElements(OnnxNode n) {
        return List.of(n.call("scatter_elements", List.of(n.input(0), n.input(1), n.input(2)),
                "axis", n.attrInt("axis", 0), "reduction", reduction(n)));
    }

    /** ONNX's {@code reduction} (opset 16+; absent before) in TVM's words: "none" is "update", "mul" stays "mul". */
    private static String reduction(OnnxNode n) {
        String r = n.attrString("reduction", "none");
        return switch (r) {
            case "none" -> "update";
            case "add", "mul", "min", "max" -> r;
            default -> throw n.unsupported("reduction \"" + r + "\" is not one of none, add, mul, min, max");
        };
    }

    /**
     * ONNX puts the index tuple in the last dim of indices {@code (Y..., M)}; the Relay ops take it
     * first, {@code (M, Y...)} (TVM's layout, one contiguous column per tuple component).
     */
    private static Expr indexColumnsFirst(OnnxNode n, int i) {
        int rank = n.inputRank(i);
        if (rank == 0) throw n.unsupported("indices must have rank >= 1, got a scalar");
        long[] perm = new long[rank];
        perm[0] = rank - 1;
        for (int d = 1; d < rank; d++) perm[d] = d - 1;
        return n.call("transpose", List.of(n.input(i)), "axes", perm);
    }

    /**
     * TensorScatter (the KV-cache update, opset 24): {@code update} (the cache's shape but
     * sequence_length at {@code axis}) is written into {@code past_cache} starting at
     * {@code write_indices[batch]} (0 when absent) along the axis, modulo max_sequence_length in
     * "circular" mode. That is a scatter_elements along the axis whose indices are
     * {@code write_indices[b] + s} at every update position {@code (b, .., s, ..)}, built here by
     * broadcasting; in "linear" mode an index past the cache end is rejected by scatter_elements.
     */
    private static List<Expr> tensorScatter(OnnxNode n) {
        TensorType past = n.inputType(0);
        TensorType update = n.inputType(1);
        int rank = past.rank();
        long axisAttr = n.attrInt("axis", -2);
        int axis = (int) (axisAttr < 0 ? axisAttr + rank : axisAttr);
        // axis 0 is the batch, which write_indices index: the sequence axis must be another one
        if (axis < 1 || axis >= rank) throw n.unsupported("axis " + axisAttr + " must name a non-batch axis of rank " + rank);
        String mode = n.attrString("mode", "linear");
        if (!mode.equals("linear") && !mode.equals("circular")) throw n.unsupported("mode \"" + mode + "\" is not linear or circular");
        if (!update.isStatic()) throw n.unsupported("update " + update + " must have a static shape");
        int[] us = update.staticShape();
        if (update.rank() != rank) throw n.unsupported("update " + update + " must have the rank of past_cache " + past);
        int seq = us[axis];
        int[] seqShape = new int[rank];
        Arrays.fill(seqShape, 1);
        seqShape[axis] = seq;
        long[] offsets = new long[seq];
        for (int i = 0; i < seq; i++) offsets[i] = i;
        Expr indices = OnnxNode.constant(NDArray.fromLongs(DType.INT64, seqShape, offsets));
        if (n.hasInput(2)) {
            long[] perBatch = new long[rank];
            Arrays.fill(perBatch, 1);
            perBatch[0] = -1;
            Expr start = n.call("reshape", List.of(n.input(2)), "newshape", perBatch);
            if (!n.inputType(2).dtype().equals(DType.INT64)) start = n.call("cast", List.of(start), "dtype", "int64");
            indices = n.call("add", indices, start);
        }
        if (mode.equals("circular")) {
            Dim max = past.shape().get(axis);
            if (!max.isStatic()) throw n.unsupported("circular mode needs a static max_sequence_length, got " + past);
            indices = n.call("floor_mod", indices, OnnxNode.constant(NDArray.scalar(max.value())));
        }
        indices = n.call("broadcast_to", List.of(indices), "shape", Arrays.stream(us).asLongStream().toArray());
        return List.of(n.call("scatter_elements", List.of(n.input(0), indices, n.input(1)), "axis", (long) axis, "reduction", "update"));
    }

    /**
     * DepthToSpace as reshape, transpose, reshape (the ONNX definition): DCR splits channels as
     * (b, b, C/b²), CRD as (C/b², b, b), then interleaves the block dims into H and W. The batch
     * dim may be dynamic (reshape's 0 copies it); C, H, W must be static.
     */
    private static List<Expr> depthToSpace(OnnxNode n) {
        long b = blocksize(n);
        String mode = n.attrString("mode", "DCR");
        long[] s = staticNchw(n);
        long c = s[1], h = s[2], w = s[3];
        if (c % (b * b) != 0) throw n.unsupported("channels " + c + " are not divisible by blocksize² " + b * b);
        long oc = c / (b * b);
        long[] split;
        long[] perm;
        switch (mode) {
            case "DCR" -> {
                split = new long[] {0, b, b, oc, h, w};
                perm = new long[] {0, 3, 4, 1, 5, 2};
            }
            case "CRD" -> {
                split = new long[] {0, oc, b, b, h, w};
                perm = new long[] {0, 1, 4, 2, 5, 3};
            }
            default -> throw n.unsupported("mode \"" + mode + "\" is not DCR or CRD");
        }
        Expr x = n.call("reshape", List.of(n.input(0)), "newshape", split);
        x = n.call("transpose", List.of(x), "axes", perm);
        return List.of(n.call("reshape", List.of(x), "newshape", new long[] {0, oc, h * b, w * b}));
    }

    /** SpaceToDepth, DepthToSpace's DCR inverse: each b×b block of H, W becomes b² channels, block offsets outermost. */
    private static List<Expr> spaceToDepth(OnnxNode n) {
        long b = blocksize(n);
        long[] s = staticNchw(n);
        long c = s[1], h = s[2], w = s[3];
        if (h % b != 0 || w % b != 0) throw n.unsupported("spatial dims " + h + "x" + w + " are not divisible by blocksize " + b);
        Expr x = n.call("reshape", List.of(n.input(0)), "newshape", new long[] {0, c, h / b, b, w / b, b});
        x = n.call("transpose", List.of(x), "axes", new long[] {0, 3, 5, 1, 2, 4});
        return List.of(n.call("reshape", List.of(x), "newshape", new long[] {0, c * b * b, h / b, w / b}));
    }

    private static long blocksize(OnnxNode n) {
        if (!n.hasAttr("blocksize")) throw n.unsupported("attribute 'blocksize' is required");
        long b = n.attrInt("blocksize", 1);
        if (b < 1) throw n.unsupported("blocksize must be positive, got " + b);
        return b;
    }

    /** The input's (N, C, H, W), N as 0 (the reshapes copy it); C, H, W must be known. */
    private static long[] staticNchw(OnnxNode n) {
        TensorType t = n.inputType(0);
        if (t.rank() != 4) throw n.unsupported("input must be 4-D (N, C, H, W), got " + t);
        long[] s = new long[4];
        for (int d = 1; d < 4; d++) {
            Dim dim = t.shape().get(d);
            if (!dim.isStatic()) throw n.unsupported("dim " + d + " of " + t + " must be static");
            s[d] = dim.value();
        }
        return s;
    }
}
