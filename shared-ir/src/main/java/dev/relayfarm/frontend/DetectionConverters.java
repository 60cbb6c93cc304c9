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
     * RoiAlign in avg mode with a fixed sampling_ratio s, from the rois as data. Each roi (x1, y1, x2, y2)
     * scaled by spatial_scale (less 0.5 in half_pixel mode; at least 1×1 in output_half_pixel mode) is
     * cut into output_height × output_width bins with s×s sample points each, bilinearly interpolated
     * and averaged. Bilinear sampling is separable: along each axis a sample at c contributes
     * (1 − frac) at ⌊c⌋ and frac at ⌊c⌋ + 1 (c clamped up to 0; at the last pixel both go to it; 0 when
     * c &lt; −1 or c &gt; size), so every roi gets a weight matrix per axis, Wy [PH, H] and Wx [PW, W],
     * each the mean over its s samples, built with one_hot, and Y[r] = Wy · X[batch_indices[r]] · Wxᵀ
     * by two batch_matmuls. max mode (not separable) and the adaptive sampling ratio (0: its sample
     * count depends on each roi's size) are not supported.
     */
    private static List<Expr> roiAlign(OnnxNode n) {
        TensorType xt = n.inputType(0);
        if (xt.rank() != 4 || !xt.shape().get(1).isStatic() || !xt.shape().get(2).isStatic() || !xt.shape().get(3).isStatic()) {
            throw n.unsupported("X must be [N, C, H, W] with static C, H and W, got " + xt);
        }
        DType dt = xt.dtype();
        if (!dt.isFloat()) throw n.unsupported("X must be floating-point, got " + dt);
        String mode = n.attrString("mode", "avg");
        if (!mode.equals("avg")) throw n.unsupported("mode=" + mode + " is not supported (only avg)");
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
        Expr wy = axisWeights(n, rois, 1, 3, h, ph, s, scale, half, dt); // [R, PH, H]
        Expr wx = axisWeights(n, rois, 0, 2, w, pw, s, scale, half, dt); // [R, PW, W]
        Expr idx = n.inputType(2).dtype().equals(DType.INT64) ? n.input(2) : MathConverters.cast(n, n.input(2), DType.INT64);
        Expr xr = n.call("take", List.of(n.input(0), idx), "axis", 0L, "mode", "fast"); // [R, C, H, W]
        Expr t1 = n.call("nn.batch_matmul", List.of(n.call("reshape", List.of(xr), "newshape", new long[] {-1, c * h, w}), wx),
                "transpose_a", false, "transpose_b", true); // [R, C·H, PW]
        Expr t2 = n.call("transpose", List.of(n.call("reshape", List.of(t1), "newshape", new long[] {-1, c, h, pw})), "axes", new long[] {0, 1, 3, 2});
        Expr t3 = n.call("nn.batch_matmul", List.of(n.call("reshape", List.of(t2), "newshape", new long[] {-1, c * pw, h}), wy),
                "transpose_a", false, "transpose_b", true); // [R, C·PW, PH]
        Expr y = n.call("transpose", List.of(n.call("reshape", List.of(t3), "newshape", new long[] {-1, c, pw, ph})), "axes", new long[] {0, 1, 3, 2});
        return List.of(y);
    }

    private static Expr scalar(DType t, double v) {
        return QuantConverters.scalar(t, v);
    }

    /** One axis's [R, bins, size] interpolation weights from roi columns {@code lo} and {@code hi}, averaged over s samples per bin. */
    private static Expr axisWeights(OnnxNode n, Expr rois, long lo, long hi, long size, long bins, long s, double scale, boolean half, DType dt) {
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
        Expr frac = n.call("multiply", n.call("subtract", c1, low), valid);
        Expr rest = n.call("multiply", n.call("subtract", scalar(dt, 1), n.call("subtract", c1, low)), valid);
        Expr weights = n.call("add", n.call("multiply", oneHot(n, low, size, dt), expand(n, rest)), n.call("multiply", oneHot(n, high, size, dt), expand(n, frac)));
        Expr perBin = n.call("reshape", List.of(weights), "newshape", new long[] {-1, bins, s, size});
        return n.call("divide", n.call("sum", List.of(perBin), "axis", new long[] {2}, "keepdims", false), scalar(dt, s));
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
