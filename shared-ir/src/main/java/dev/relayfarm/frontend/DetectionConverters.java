package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import java.util.List;

/** ONNX detection operators: NonMaxSuppression (a data-dependent result length). */
final class DetectionConverters {
    private DetectionConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("NonMaxSuppression", DetectionConverters::nonMaxSuppression);
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
