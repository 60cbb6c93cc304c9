package dev.relayfarm.quantize.qdq;

import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxTensors;
import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A QDQ model's activation pairs as our quantize points: each {@code DequantizeLinear(QuantizeLinear(x, s, z), s, z)}
 * with one per-tensor scale and a symmetric 8-bit range (int8 with zero point 0, uint8 with 0 — unsigned — or 128,
 * which is int8 shifted) becomes one node {@code dev.relayfarm.SimulatedQuantize(x, s)}, which the importer turns
 * into {@code annotation.simulated_quantize}. The weights' DequantizeLinear stay: they fold into float constants at
 * import and {@link dev.relayfarm.quantize.Quantizer#realizeQdq} puts weight points back on them. A pair with another
 * zero point (an asymmetric range, which realize has no zero points for) is left as it is: that tensor stays float.
 *
 * <p>This is ONNX Runtime's move (QDQ groups → integer kernels) and, like it, not bit-exact with the QDQ graph's float
 * semantics: realize rounds half away from zero where QuantizeLinear rounds half to even, and an int8 point's range is
 * [-127, 127] where QuantizeLinear's is [-128, 127].
 */
public final class QdqPairs {
    private QdqPairs() {}

    /** The rewritten model and how many pairs became points. */
    public record Result(ModelProto model, int pairs) {}

    public static Result mark(ModelProto model, Path baseDir) {
        GraphProto g = model.getGraph();
        Map<String, TensorProto> inits = new HashMap<>();
        for (TensorProto t : g.getInitializerList()) inits.put(t.getName(), t);
        Map<String, NodeProto> quantizeOf = new HashMap<>();
        for (NodeProto n : g.getNodeList()) if (n.getOpType().equals("QuantizeLinear") && n.getDomain().isEmpty()) quantizeOf.put(n.getOutput(0), n);
        GraphProto.Builder out = g.toBuilder().clearNode();
        int pairs = 0;
        for (NodeProto n : g.getNodeList()) {
            NodeProto q = n.getOpType().equals("DequantizeLinear") && n.getDomain().isEmpty() ? quantizeOf.get(n.getInput(0)) : null;
            Boolean signed = q == null ? null : symmetric(q, n, inits, baseDir);
            if (signed == null) {
                out.addNode(n);
                continue;
            }
            pairs++;
            out.addNode(NodeProto.newBuilder().setOpType(OnnxImporter.QUANTIZE_POINT).setDomain(OnnxImporter.OUR_DOMAIN).setName(n.getName().isEmpty() ? n.getOutput(0) : n.getName())
                    .addInput(q.getInput(0)).addInput(q.getInput(1)).addOutput(n.getOutput(0))
                    .addAttribute(AttributeProto.newBuilder().setName("signed").setType(AttributeProto.AttributeType.INT).setI(signed ? 1 : 0)));
        }
        // the QuantizeLinear nodes stay (a reader of the integer tensor still has it); unread ones cost nothing once imported
        ModelProto.Builder m = model.toBuilder().setGraph(out);
        if (pairs > 0 && m.getOpsetImportList().stream().noneMatch(o -> o.getDomain().equals(OnnxImporter.OUR_DOMAIN))) {
            m.addOpsetImport(OperatorSetIdProto.newBuilder().setDomain(OnnxImporter.OUR_DOMAIN).setVersion(1));
        }
        return new Result(m.build(), pairs);
    }

    /**
     * Whether the pair is a symmetric 8-bit one: signed (true), unsigned (false), or not one we take (null): both
     * nodes on the same constant per-tensor scale and zero point.
     */
    private static Boolean symmetric(NodeProto q, NodeProto dq, Map<String, TensorProto> inits, Path baseDir) {
        if (q.getInputCount() < 2 || dq.getInputCount() < 2 || q.getInputCount() != dq.getInputCount()) return null;
        for (int i = 1; i < q.getInputCount(); i++) if (!q.getInput(i).equals(dq.getInput(i)) || !inits.containsKey(q.getInput(i))) return null;
        NDArray scale = OnnxTensors.toNDArray(inits.get(q.getInput(1)), baseDir, q.getName() + " scale");
        if (scale.elementCount() != 1 || !(scale.getDouble(0) > 0)) return null;
        if (q.getInputCount() < 3) return Boolean.FALSE; // no zero point: uint8, 0
        NDArray zp = OnnxTensors.toNDArray(inits.get(q.getInput(2)), baseDir, q.getName() + " zero point");
        if (zp.elementCount() != 1) return null;
        long z = (long) zp.getDouble(0);
        if (zp.dtype().equals(DType.INT8) && z == 0) return Boolean.TRUE;
        if (zp.dtype().equals(DType.UINT8) && z == 0) return Boolean.FALSE;
        if (zp.dtype().equals(DType.UINT8) && z == 128) return Boolean.TRUE;
        return null;
    }
}
