package dev.relayfarm.quantize.qdq;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Folds an inference BatchNormalization into the Conv before it (what ORT's quantization pre-processing does before
 * {@code quantize_static}, so the quantized weights are the ones the conv really multiplies by):
 * {@code k = scale / sqrt(var + eps)}, {@code W'[c] = W[c] * k[c]}, {@code b' = (b - mean) * k + B}. Only a conv whose
 * output only that BatchNormalization reads, with constant parameters, is folded; the conv then writes the
 * BatchNormalization's output name, so its readers are unchanged.
 *
 * <pre>
 * y = Conv(x, W, b); z = BatchNormalization(y, scale, B, mean, var)   ==>   z = Conv(x, W', b')
 * </pre>
 *
 * The folded weights and bias are returned as values, not written into the graph: the exporter writes them
 * quantized.
 */
final class BatchNormFolding {
    private BatchNormFolding() {}

    /**
     * A conv: its node (folded or not), weight, bias (null when it has neither bias nor BatchNormalization) and the
     * factor {@code k[c]} its output channels were multiplied by (null when nothing was folded).
     */
    record Folded(NodeProto conv, NDArray weight, NDArray bias, double[] factor) {}

    /** The graph after folding, and per conv (by its output name before folding) its weight and bias. */
    record Result(List<NodeProto> nodes, Map<String, Folded> convs) {}

    /**
     * Folds where the conventions allow, for the convs whose output names are in {@code convOutputs}; {@code values}
     * holds the graph's constant tensors. A conv that is not folded is still listed, with its own weight and bias.
     */
    static Result fold(List<NodeProto> nodes, Set<String> convOutputs, Map<String, NDArray> values, Set<String> graphOutputs) {
        Map<String, List<NodeProto>> readers = new HashMap<>();
        for (NodeProto n : nodes) for (String in : n.getInputList()) readers.computeIfAbsent(in, k -> new ArrayList<>()).add(n);
        Map<String, Folded> convs = new HashMap<>();
        Map<NodeProto, NodeProto> replaced = new HashMap<>();
        List<NodeProto> dropped = new ArrayList<>();
        for (NodeProto conv : nodes) {
            if (!conv.getOpType().equals("Conv") || conv.getOutputCount() != 1 || !convOutputs.contains(conv.getOutput(0))) continue;
            String y = conv.getOutput(0);
            NDArray w = values.get(conv.getInput(1));
            NDArray b = conv.getInputCount() > 2 && !conv.getInput(2).isEmpty() ? values.get(conv.getInput(2)) : null;
            if (w == null) throw new QdqExportException("conv '" + conv.getName() + "': its weight '" + conv.getInput(1) + "' is not a constant");
            List<NodeProto> rs = readers.getOrDefault(y, List.of());
            NodeProto bn = rs.size() == 1 && rs.getFirst().getOpType().equals("BatchNormalization") && rs.getFirst().getInput(0).equals(y) ? rs.getFirst() : null;
            if (bn != null && (graphOutputs.contains(y) || !inference(bn) || !constants(bn, values))) bn = null;
            if (bn == null) {
                convs.put(y, new Folded(conv, w, b, null));
                continue;
            }
            double eps = 1e-5;
            for (AttributeProto a : bn.getAttributeList()) if (a.getName().equals("epsilon")) eps = a.getF();
            NDArray scale = values.get(bn.getInput(1)), beta = values.get(bn.getInput(2)), mean = values.get(bn.getInput(3)), var = values.get(bn.getInput(4));
            int channels = w.dim(0), inner = w.elementCount() / channels;
            float[] wf = new float[w.elementCount()], bf = new float[channels];
            double[] factor = new double[channels];
            for (int c = 0; c < channels; c++) {
                double k = scale.getDouble(c) / Math.sqrt(var.getDouble(c) + eps);
                factor[c] = k;
                for (int i = 0; i < inner; i++) wf[c * inner + i] = (float) (w.getDouble(c * inner + i) * k);
                bf[c] = (float) (((b == null ? 0 : b.getDouble(c)) - mean.getDouble(c)) * k + beta.getDouble(c));
            }
            NodeProto.Builder folded = conv.toBuilder().setOutput(0, bn.getOutput(0));
            if (folded.getInputCount() < 3) folded.addInput(conv.getInput(1) + "_bnfolded_bias");
            NodeProto f = folded.build();
            convs.put(y, new Folded(f, NDArray.wrap(DType.FLOAT32, w.shape(), wf), NDArray.wrap(DType.FLOAT32, new int[] {channels}, bf), factor));
            replaced.put(conv, f);
            dropped.add(bn);
        }
        List<NodeProto> out = new ArrayList<>();
        for (NodeProto n : nodes) {
            if (dropped.contains(n)) continue;
            out.add(replaced.getOrDefault(n, n));
        }
        return new Result(out, convs);
    }

    /** An inference-mode BatchNormalization: one output, no training_mode. */
    private static boolean inference(NodeProto bn) {
        for (AttributeProto a : bn.getAttributeList()) if (a.getName().equals("training_mode") && a.getI() != 0) return false;
        return bn.getOutputList().stream().skip(1).allMatch(String::isEmpty);
    }

    private static boolean constants(NodeProto bn, Map<String, NDArray> values) {
        for (int i = 1; i <= 4; i++) if (bn.getInputCount() <= i || !values.containsKey(bn.getInput(i))) return false;
        return true;
    }
}
