package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.List;

/** ONNX detection operators: NonMaxSuppression (a data-dependent result length) and RoiAlign. */
final class DetectionConverters {
    private DetectionConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("NonMaxSuppression", DetectionConverters::nonMaxSuppression);
        b.add("RoiAlign", DetectionConverters::roiAlign);
    }

    /**
     * RoiAlign with a fixed sampling_ratio s, from the rois as data. Each roi (x1, y1, x2, y2) scaled by
     * spatial_scale (less 0.5 in half_pixel mode; at least 1×1 in output_half_pixel mode) is cut into
     * output_height × output_width bins with s×s bilinear sample points each. Bilinear sampling is
     * separable: along each axis a sample at c reads ⌊c⌋ with weight 1 − frac and ⌊c⌋ + 1 with weight
     * frac (c clamped up to 0; at the last pixel both read it; weight 0 when c &lt; −1 or c &gt; size).
     * avg mode: every roi gets a weight matrix per axis, Wy [PH, H] and Wx [PW, W], each the mean over
     * its s samples (one_hot rows), and Y[r] = Wy · X[batch_indices[r]] · Wxᵀ (two batch_matmuls).
     * max mode (the spec's reference): the maximum over the bin's samples of the largest of the four
     * weighted corner values; each corner's values are gathered by the same products with 0/1 one_hot
     * rows (exact for finite inputs). The adaptive sampling ratio (0: a sample count that depends on
     * each roi's size) is not supported.
     */
    private static List<Expr> roiAlign(OnnxNode n) {
        TensorType xt = n.inputType(0);
        if (xt.rank() != 4 || !xt.shape().get(1).isStatic() || !xt.shape().get(2).isStatic() || !xt.shape().get(3).isStatic()) {
            throw n.unsupported("X must be [N, C, H, W] with static C, H and W, got " + xt);
        }
        DType dt = xt.dtype();
        if (!dt.isFloat()) throw n.unsupported("X must be floating-point, got " + dt);
        String mode = n.attrString("mode", "avg");
        if (!mode.equals("avg") && !mode.equals("max")) throw n.unsupported("mode must be avg or max, got " + mode);
        String coord = n.opset() < 16 ? "output_half_pixel" : n.attrString("coordinate_transformation_mode", "half_pixel");
        if (!coord.equals("half_pixel") && !coord.equals("output_half_pixel")) {
            throw n.unsupported("coordinate_transformation_mode must be half_pixel or output_half_pixel, got " + coord);
        }
        long ph = n.attrInt("output_height", 1), pw = n.attrInt("output_width", 1), s = n.attrInt("sampling_ratio", 0);
        if (ph < 1 || pw < 1) throw n.unsupported("output_height and output_width must be positive, got " + ph + " and " + pw);
        if (s < 1) throw n.unsupported("sampling_ratio=" + s + " (adaptive: a sample count per roi from its size) is not supported");
        double scale = n.attrFloat("spatial_scale", 1f);
        TensorType rt = n.inputType(1);
        if (rt.rank() != 2 || !rt.shape().get(1).isStatic() || rt.shape().get(1).value() != 4) throw n.unsupported("rois must be [num_rois, 4], got " + rt);
        long c = xt.shape().get(1).value(), h = xt.shape().get(2).value(), w = xt.shape().get(3).value();
        Expr rois = n.input(1);
        boolean half = coord.equals("half_pixel");
        Samples ys = samples(n, rois, 1, 3, h, ph, s, scale, half, dt); // [R, PH·s, ...]
        Samples xs = samples(n, rois, 0, 2, w, pw, s, scale, half, dt); // [R, PW·s, ...]
        Expr idx = n.inputType(2).dtype().equals(DType.INT64) ? n.input(2) : MathConverters.cast(n, n.input(2), DType.INT64);
        Expr xr = n.call("take", List.of(n.input(0), idx), "axis", 0L, "mode", "fast"); // [R, C, H, W]
        if (mode.equals("avg")) {
            return List.of(sandwich(n, xr, perBinMean(n, ys.weights(n), ph, s, h), perBinMean(n, xs.weights(n), pw, s, w), c, h, w, ph, pw));
        }
        Expr best = null;
        for (int a = 0; a < 2; a++) {
            for (int b = 0; b < 2; b++) {
                Expr values = sandwich(n, xr, ys.hot().get(a), xs.hot().get(b), c, h, w, ph * s, pw * s); // [R, C, PH·s, PW·s]
                Expr wy = n.call("reshape", List.of(ys.weight().get(a)), "newshape", new long[] {-1, 1, ph * s, 1});
                Expr wx = n.call("reshape", List.of(xs.weight().get(b)), "newshape", new long[] {-1, 1, 1, pw * s});
                Expr term = n.call("multiply", values, n.call("multiply", wy, wx));
                best = best == null ? term : n.call("maximum", best, term);
            }
        }
        Expr bins = n.call("reshape", List.of(best), "newshape", new long[] {-1, c, ph, s, pw, s});
        return List.of(n.call("max", List.of(bins), "axis", new long[] {3, 5}, "keepdims", false));
    }

    /** Y[r] = A[r] · X[r] · B[r]ᵀ for X [R, C, H, W], A [R, P, H], B [R, Q, W]: [R, C, P, Q]. */
    private static Expr sandwich(OnnxNode n, Expr xr, Expr a, Expr b, long c, long h, long w, long p, long q) {
        Expr t1 = n.call("nn.batch_matmul", List.of(n.call("reshape", List.of(xr), "newshape", new long[] {-1, c * h, w}), b),
                "transpose_a", false, "transpose_b", true); // [R, C·H, Q]
        Expr t2 = n.call("transpose", List.of(n.call("reshape", List.of(t1), "newshape", new long[] {-1, c, h, q})), "axes", new long[] {0, 1, 3, 2});
        Expr t3 = n.call("nn.batch_matmul", List.of(n.call("reshape", List.of(t2), "newshape", new long[] {-1, c * q, h}), a),
                "transpose_a", false, "transpose_b", true); // [R, C·Q, P]
        return n.call("transpose", List.of(n.call("reshape", List.of(t3), "newshape", new long[] {-1, c, q, p})), "axes", new long[] {0, 1, 3, 2});
    }

    private static Expr perBinMean(OnnxNode n, Expr weights, long bins, long s, long size) {
        Expr perBin = n.call("reshape", List.of(weights), "newshape", new long[] {-1, bins, s, size});
        DType dt = ((TensorType) n.typeOf(weights)).dtype();
        return n.call("divide", n.call("sum", List.of(perBin), "axis", new long[] {2}, "keepdims", false), scalar(dt, s));
    }

    private static Expr scalar(DType t, double v) {
        return QuantConverters.scalar(t, v);
    }

    /**
     * One axis's samples of every roi: the 0/1 rows [R, bins·s, size] of the low and high pixel each
     * sample reads, and their weights [R, bins·s] (0 for a sample outside the image).
     */
    private record Samples(List<Expr> hot, List<Expr> weight) {
        /** The interpolation rows, both pixels weighted: [R, bins·s, size]. */
        Expr weights(OnnxNode n) {
            return n.call("add", n.call("multiply", hot.get(0), expand(n, weight.get(0))), n.call("multiply", hot.get(1), expand(n, weight.get(1))));
        }
    }

    /** The samples of roi columns {@code lo} and {@code hi} (x1, x2 or y1, y2) along an axis of {@code size} pixels. */
    private static Samples samples(OnnxNode n, Expr rois, long lo, long hi, long size, long bins, long s, double scale, boolean half, DType dt) {
        Expr off = scalar(dt, half ? 0.5 : 0);
        Expr start = n.call("subtract", n.call("multiply", column(n, rois, lo), scalar(dt, scale)), off); // [R, 1]
        Expr end = n.call("subtract", n.call("multiply", column(n, rois, hi), scalar(dt, scale)), off);
        Expr extent = n.call("subtract", end, start);
        if (!half) extent = n.call("maximum", extent, scalar(dt, 1));
        Expr bin = n.call("divide", extent, scalar(dt, bins));
        double[] offsets = new double[(int) (bins * s)];
        for (int b = 0; b < bins; b++) for (int i = 0; i < s; i++) offsets[(int) (b * s + i)] = b + (i + 0.5) / s;
        Expr steps = OnnxNode.constant(NDArray.fromDoubles(dt, new int[] {offsets.length}, offsets));
        Expr coord = n.call("add", start, n.call("multiply", bin, steps)); // [R, bins·s]
        Expr valid = n.call("cast", List.of(n.call("logical_not", n.call("logical_or", n.call("less", coord, scalar(dt, -1)),
                n.call("greater", coord, scalar(dt, size))))), "dtype", dt.toString());
        Expr c0 = n.call("maximum", coord, scalar(dt, 0));
        Expr low = n.call("floor", c0);
        Expr edge = n.call("greater_equal", low, scalar(dt, size - 1));
        low = n.call("where", edge, scalar(dt, size - 1), low);
        Expr c1 = n.call("where", edge, low, c0);
        Expr high = n.call("where", edge, low, n.call("add", low, scalar(dt, 1)));
        Expr frac = n.call("subtract", c1, low);
        Expr lowWeight = n.call("multiply", n.call("subtract", scalar(dt, 1), frac), valid);
        Expr highWeight = n.call("multiply", frac, valid);
        return new Samples(List.of(oneHot(n, low, size, dt), oneHot(n, high, size, dt)), List.of(lowWeight, highWeight));
    }

    private static Expr column(OnnxNode n, Expr rois, long k) {
        return n.call("take", List.of(rois, OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[] {1}, new long[] {k}))), "axis", 1L, "mode", "fast");
    }

    private static Expr expand(OnnxNode n, Expr e) {
        return n.call("expand_dims", List.of(e), "axis", -1L, "num_newaxis", 1L);
    }

    private static Expr oneHot(OnnxNode n, Expr index, long depth, DType dt) {
        Expr i = n.call("cast", List.of(index), "dtype", "int64");
        return n.call("one_hot", List.of(i, scalar(dt, 1), scalar(dt, 0)), "depth", depth, "axis", -1L, "dtype", dt.toString());
    }

    /** Absent optional inputs take ONNX's defaults: keep no boxes, IoU threshold 0, no score threshold. */
    private static List<Expr> nonMaxSuppression(OnnxNode n) {
        DType ft = n.inputType(1).dtype();
        Expr maxOut = n.hasInput(2) ? n.input(2) : OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[0], new long[] {0}));
        Expr iou = n.hasInput(3) ? n.input(3) : QuantConverters.scalar(ft, 0);
        Expr score = n.hasInput(4) ? n.input(4) : QuantConverters.scalar(ft, Double.NEGATIVE_INFINITY);
        return List.of(n.call("vision.onnx_non_max_suppression", List.of(n.input(0), n.input(1), maxOut, iou, score),
                "center_point_box", n.attrInt("center_point_box", 0)));
    }
}
