package dev.relayfarm.quantize.qdq;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Moves a graph's default-domain nodes to opset 13, the first whose QuantizeLinear / DequantizeLinear take a
 * per-axis scale (the exporter's per-channel weights need it). A node's meaning must not change on the way:
 *
 * <ul>
 *   <li>Softmax / LogSoftmax / Hardmax before 13 normalize over the input flattened to 2-D at {@code axis} (default 1),
 *       from 13 over the one axis: rewritten as {@code Flatten(axis) -> op(axis=-1) -> Reshape(Shape(x))}, which
 *       computes the old meaning at any opset;
 *   <li>operators whose attributes became inputs or whose meaning changed between the model's opset and 13 (Split,
 *       Squeeze, Unsqueeze, ReduceSum at 13, Dropout at 12, Clip, Pad, Resize, Scatter at 11, Slice, TopK, Upsample at 10,
 *       BatchNormalization at 9) are refused with
 *       the node named, as are models below opset 7 (broadcast attributes): converting them is not done;
 *   <li>every other operator is taken to mean the same at 13 (the changes we know of between 7 and 13 only added types or
 *       optional attributes); an operator missing from this list is the list's bug.
 * </ul>
 *
 * <pre>
 * Softmax(x, axis=1)        // opset 11, x: [N, C, L]
 *   ==>  Reshape(Softmax(Flatten(x, axis=1), axis=-1), Shape(x))   // opset 13
 * </pre>
 */
final class OpsetUpgrade {
    static final long TARGET = 13;

    /** Operator -> the first opset (at most 13) whose form or meaning differs from older ones in a way not converted here. */
    private static final Map<String, Long> CHANGED = Map.ofEntries(
            Map.entry("Split", 13L), Map.entry("Squeeze", 13L), Map.entry("Unsqueeze", 13L), Map.entry("ReduceSum", 13L),
            Map.entry("Dropout", 12L), Map.entry("Clip", 11L), Map.entry("Pad", 11L), Map.entry("Resize", 11L),
            Map.entry("Slice", 10L), Map.entry("TopK", 10L), Map.entry("Upsample", 10L),
            // BatchNormalization dropped its `spatial` attribute at 9; Scatter was replaced by ScatterElements at 11
            Map.entry("BatchNormalization", 9L), Map.entry("Scatter", 11L));

    private OpsetUpgrade() {}

    /** {@code nodes} of a graph at default-domain opset {@code from}, as opset-13 nodes. */
    static List<NodeProto> upgrade(List<NodeProto> nodes, long from) {
        if (from >= TARGET) return nodes;
        if (from < 7) throw new QdqExportException("opset " + from + " is below 7 (broadcast attributes); moving it to opset 13 is not supported");
        List<NodeProto> out = new ArrayList<>();
        for (NodeProto n : nodes) {
            boolean defaultDomain = n.getDomain().isEmpty() || n.getDomain().equals("ai.onnx");
            Long changed = defaultDomain ? CHANGED.get(n.getOpType()) : null;
            if (changed != null && from < changed) {
                throw new QdqExportException("node '" + n.getName() + "' (" + n.getOpType() + ") changed at opset " + changed
                        + "; the model is at opset " + from + " and the QDQ export needs 13 (converting it is not supported)");
            }
            if (defaultDomain && List.of("Softmax", "LogSoftmax", "Hardmax").contains(n.getOpType())) {
                out.addAll(flattened(n));
            } else {
                out.add(n);
            }
        }
        return out;
    }

    /** The pre-13 meaning of a Softmax-like node spelled in opset-13 nodes. */
    private static List<NodeProto> flattened(NodeProto n) {
        long axis = 1;
        for (AttributeProto a : n.getAttributeList()) if (a.getName().equals("axis")) axis = a.getI();
        String x = n.getInput(0), y = n.getOutput(0);
        String flat = y + "_flat2d", norm = y + "_norm2d", shape = y + "_inshape";
        return List.of(
                NodeProto.newBuilder().setOpType("Flatten").setName(n.getName() + "_flatten").addInput(x).addOutput(flat)
                        .addAttribute(AttributeProto.newBuilder().setName("axis").setType(AttributeProto.AttributeType.INT).setI(axis)).build(),
                NodeProto.newBuilder().setOpType(n.getOpType()).setName(n.getName()).addInput(flat).addOutput(norm)
                        .addAttribute(AttributeProto.newBuilder().setName("axis").setType(AttributeProto.AttributeType.INT).setI(-1)).build(),
                NodeProto.newBuilder().setOpType("Shape").setName(n.getName() + "_shape").addInput(x).addOutput(shape).build(),
                NodeProto.newBuilder().setOpType("Reshape").setName(n.getName() + "_reshape").addInput(norm).addInput(shape).addOutput(y).build());
    }
}
