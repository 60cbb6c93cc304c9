package dev.relayfarm.ops.vision;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code vision.onnx_non_max_suppression(boxes, scores, max_output_boxes_per_class, iou_threshold,
 * score_threshold, center_point_box=0)}: ONNX NonMaxSuppression. boxes [B, N, 4], scores [B, C, N]
 * (float), the last three scalars or 1-element tensors. The result is int64 [?, 3] rows of
 * (batch, class, box): how many boxes survive is known only at run time, so its length is {@code Any}.
 *
 * <p>Per batch and class: boxes scoring strictly above the score threshold are visited by score,
 * highest first (ties: lower box index first); a box is kept unless its IoU with an already kept
 * box is strictly above the IoU threshold; at most max_output_boxes_per_class are kept (0 keeps none).
 * A box of zero area overlaps nothing. Corners may come in either order (y1 > y2 is allowed).
 */
public final class NonMaxSuppression {
    private NonMaxSuppression() {}

    public record NmsAttrs(long centerPointBox) {}

    public static final OpDef<NmsAttrs> DEF = new OpDef<>(
            "vision.onnx_non_max_suppression", 5, NonMaxSuppression::parse, NonMaxSuppression::relation,
            OpPattern.OPAQUE, (in, a) -> List.of(compute(in, a)));

    static NmsAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("vision.onnx_non_max_suppression", attrs);
        long c = r.integer("center_point_box", 0);
        r.finish();
        if (c != 0 && c != 1) throw new RelationException("vision.onnx_non_max_suppression: center_point_box must be 0 or 1, got " + c);
        return new NmsAttrs(c);
    }

    static boolean relation(List<Type> types, int numInputs, NmsAttrs a, TypeReporter reporter) {
        String op = "vision.onnx_non_max_suppression";
        String[] names = {"boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"};
        TensorType[] t = new TensorType[5];
        for (int i = 0; i < 5; i++) {
            Type ty = types.get(i);
            if (ty instanceof IncompleteType) return false;
            if (!(ty instanceof TensorType tt)) throw new RelationException(op + ": " + names[i] + " must be a tensor, got " + ty);
            t[i] = tt;
        }
        if (t[0].rank() != 3 || !t[0].shape().get(2).equals(Dim.of(4)) && t[0].shape().get(2).isStatic()) {
            throw new RelationException(op + ": boxes must have shape [batches, boxes, 4], got " + t[0]);
        }
        if (t[1].rank() != 3) throw new RelationException(op + ": scores must have shape [batches, classes, boxes], got " + t[1]);
        if (!t[0].dtype().isFloat() || !t[1].dtype().equals(t[0].dtype())) {
            throw new RelationException(op + ": boxes and scores must have the same float dtype, got " + t[0].dtype() + " and " + t[1].dtype());
        }
        if (!t[2].dtype().isInteger()) throw new RelationException(op + ": max_output_boxes_per_class must be an integer, got " + t[2].dtype());
        for (int i = 2; i < 5; i++) {
            if (t[i].rank() > 1 || (t[i].rank() == 1 && t[i].shape().getFirst().isStatic() && !t[i].shape().getFirst().equals(Dim.of(1)))) {
                throw new RelationException(op + ": " + names[i] + " must be a scalar or a 1-element tensor, got " + t[i]);
            }
        }
        reporter.assign(types.get(5), new TensorType(List.of(Dim.ANY, Dim.of(3)), DType.INT64));
        return true;
    }

    static NDArray compute(List<NDArray> in, NmsAttrs a) {
        NDArray boxes = in.get(0), scores = in.get(1);
        int batches = boxes.dim(0), n = boxes.dim(1), classes = scores.dim(1);
        if (scores.dim(0) != batches || scores.dim(2) != n) {
            throw new IllegalArgumentException("vision.onnx_non_max_suppression: scores " + java.util.Arrays.toString(scores.shape())
                    + " do not match boxes " + java.util.Arrays.toString(boxes.shape()));
        }
        long maxOut = in.get(2).getLong(0);
        double iouThreshold = in.get(3).getDouble(0);
        double scoreThreshold = in.get(4).getDouble(0);
        List<long[]> selected = new ArrayList<>();
        for (int b = 0; b < batches; b++) {
            double[][] corners = new double[n][];
            for (int i = 0; i < n; i++) corners[i] = corners(boxes, (b * n + i) * 4, a.centerPointBox() == 1);
            for (int c = 0; c < classes; c++) {
                int base = (b * classes + c) * n;
                List<Integer> order = new ArrayList<>();
                for (int i = 0; i < n; i++) if (scores.getDouble(base + i) > scoreThreshold) order.add(i);
                order.sort((p, q) -> {
                    int byScore = Double.compare(scores.getDouble(base + q), scores.getDouble(base + p));
                    return byScore != 0 ? byScore : Integer.compare(p, q);
                });
                List<Integer> kept = new ArrayList<>();
                for (int i : order) {
                    if (kept.size() >= maxOut) break;
                    boolean suppressed = false;
                    for (int k : kept) {
                        if (iou(corners[i], corners[k]) > iouThreshold) {
                            suppressed = true;
                            break;
                        }
                    }
                    if (!suppressed) {
                        kept.add(i);
                        selected.add(new long[] {b, c, i});
                    }
                }
            }
        }
        long[] flat = new long[selected.size() * 3];
        for (int i = 0; i < selected.size(); i++) System.arraycopy(selected.get(i), 0, flat, i * 3, 3);
        return NDArray.wrap(DType.INT64, new int[] {selected.size(), 3}, flat);
    }

    /** [ymin, xmin, ymax, xmax] of the box at {@code off}. */
    private static double[] corners(NDArray boxes, int off, boolean center) {
        double v0 = boxes.getDouble(off), v1 = boxes.getDouble(off + 1), v2 = boxes.getDouble(off + 2), v3 = boxes.getDouble(off + 3);
        if (center) { // [x_center, y_center, width, height]
            return new double[] {v1 - v3 / 2, v0 - v2 / 2, v1 + v3 / 2, v0 + v2 / 2};
        }
        return new double[] {Math.min(v0, v2), Math.min(v1, v3), Math.max(v0, v2), Math.max(v1, v3)};
    }

    private static double iou(double[] p, double[] q) {
        double areaP = (p[2] - p[0]) * (p[3] - p[1]);
        double areaQ = (q[2] - q[0]) * (q[3] - q[1]);
        if (areaP <= 0 || areaQ <= 0) return 0;
        double h = Math.max(0, Math.min(p[2], q[2]) - Math.max(p[0], q[0]));
        double w = Math.max(0, Math.min(p[3], q[3]) - Math.max(p[1], q[1]));
        double inter = h * w;
        return inter / (areaP + areaQ - inter);
    }
}
