package dev.relayfarm.quantize.qdq;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.frontend.OnnxTensors;
import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.nn.SimulatedQuantize;
import dev.relayfarm.quantize.AnchorScales;
import dev.relayfarm.quantize.Calibration;
import dev.relayfarm.quantize.QuantizeConfig;
import dev.relayfarm.quantize.Quantizer;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes a float ONNX model as a QDQ model carrying <em>our</em> quantization decisions, in the form ONNX Runtime's
 * {@code quantize_static(quant_format=QDQ, per_channel=True)} writes, so ORT runs the same int8 model on its own
 * int8 kernels (its QDQ transformer fuses each {@code DQ -> Conv -> Q} group into QLinearConv, {@code DQ -> MatMul}
 * into MatMulIntegerToFloat or QLinearMatMul, Gemm into QGemm). For every conv2d / dense our quantizer made integer
 * (paired with its ONNX Conv / Gemm / MatMul, see below):
 *
 * <ul>
 *   <li>a BatchNormalization after the Conv is folded into it first ({@link BatchNormFolding});
 *   <li>the data input gets {@code QuantizeLinear -> DequantizeLinear} with our data point's scale: uint8 with zero
 *       point 0 for an unsigned point, uint8 with zero point 128 for a signed one (ORT's fast x86 kernels take u8
 *       activations; the range [-128, 127] holds our [-127, 127]);
 *   <li>the weight is an int8 initializer quantized with our per-channel scales (times |k| for a folded
 *       BatchNormalization: per-channel quantization commutes with a per-channel factor) behind a per-axis
 *       DequantizeLinear: axis 0 for Conv and a transposed Gemm weight, 1 for MatMul's [K, N];
 *   <li>the bias is an int32 initializer on the scale {@code s_data * s_weight[c]} (in float32, as ORT's fused kernel
 *       reads the integers without rescaling) behind a DequantizeLinear;
 *   <li>the output gets {@code Q -> DQ}: where our program requantizes (the output reaches quantized anchors through
 *       Relu / MaxPool / Reshape / Flatten only) with that point's scale, a Relu right after it dropped when the scale
 *       is unsigned (the uint8 range clips at 0 already, as ORT's quantizer drops it); otherwise, for a Conv, with a
 *       scale calibrated for it by {@link Calibration#threshold} on the calibration inputs (ORT needs an output Q to
 *       fuse a QLinearConv; our program keeps the int32 accumulator there and dequantizes it, which is one rounding
 *       the QDQ model adds); a Gemm / MatMul whose output our program dequantizes gets none.
 * </ul>
 *
 * <pre>
 * y = Conv(x, W, b); z = BatchNormalization(y, ...); r = Relu(z); ... Conv(r, W2)      // float, opset 11
 *   ==>
 * xq = QuantizeLinear(x, sx, zx); xd = DequantizeLinear(xq, sx, zx)
 * Wd = DequantizeLinear(W'q:int8, sW'[C], axis=0); bd = DequantizeLinear(b'q:int32, sx*sW'[C], axis=0)
 * z = Conv(xd, Wd, bd); zq = QuantizeLinear(z, s2, 0:uint8); r = DequantizeLinear(zq, s2, 0)    // Relu dropped, opset 13
 * </pre>
 *
 * Our anchors and the ONNX nodes are paired by order: the importer turns each Conv into one conv2d and each Gemm (and
 * MatMul when the module has it as a dense) into one dense, keeping input order, so a post-order walk of the ONNX
 * graph from its outputs meets them in the order {@link AnchorScales#read} lists them; each pair's weights are then
 * compared, and a mismatch is an error rather than a silently wrong scale. The graph moves to opset 13 (per-axis
 * QuantizeLinear) by {@link OpsetUpgrade}. Not done: quantizing Add / Concat / pooling as ORT's quantizer also may,
 * asymmetric ranges, Conv weights that are not constants, control-flow subgraphs.
 */
public final class QdqExporter {
    private static final Set<String> TRANSPARENT = Set.of("Relu", "MaxPool", "Reshape", "Flatten");

    private QdqExporter() {}

    /**
     * The QDQ model, how many Conv and Gemm / MatMul nodes it quantizes, the tensors whose scales were calibrated
     * here (conv outputs our program does not requantize), and the nodes our program quantized that the export leaves
     * float (a Gemm with alpha / beta / transA, or a bias that is not one value per unit: no QGemm form), so a
     * comparison can say where the two integer programs differ.
     */
    public record Result(ModelProto model, int quantizedConvs, int quantizedMatMuls, List<String> calibratedOutputs, List<String> leftFloat) {}

    /** Our quantization of one tensor: its scale and whether it is unsigned (zero point 0) or signed (zero point 128). */
    private record QParams(float scale, boolean unsigned) {}

    /** One quantized ONNX anchor: the node (after folding), its scales, weight and bias, and the weight's channel axis. */
    private record Plan(NodeProto node, AnchorScales scales, NDArray weight, double[] weightScales, NDArray bias, int weightAxis) {}

    /**
     * Exports {@code model} (read from {@code baseDir}, imported with {@code importOptions} into the module
     * {@code quantized} came from) with {@code quantized}'s decisions; {@code calibrationInputs} and {@code config}
     * calibrate the conv outputs our program does not requantize, by the same rule as its points.
     */
    public static Result export(ModelProto model, Path baseDir, ImportOptions importOptions, Quantizer.Result quantized,
                                List<List<NDArray>> calibrationInputs, QuantizeConfig config) {
        GraphProto g = model.getGraph();
        long opset = OnnxModels.opsets(model).getOrDefault("", 1L);
        Set<String> graphOutputs = new HashSet<>();
        for (ValueInfoProto o : g.getOutputList()) graphOutputs.add(o.getName());

        // 1. the constant inputs of anchors and BatchNormalizations, through the importer
        Set<String> wanted = new LinkedHashSet<>();
        for (NodeProto n : g.getNodeList()) {
            int from = 1, to = switch (n.getOpType()) {
                case "Conv", "Gemm", "MatMul" -> 2;
                case "BatchNormalization" -> 4;
                default -> 0;
            };
            for (int i = from; i <= to && i < n.getInputCount(); i++) if (!n.getInput(i).isEmpty()) wanted.add(n.getInput(i));
        }
        Map<String, NDArray> values = TensorProbe.constants(model, new ArrayList<>(wanted), baseDir, importOptions);

        // 2. pair our anchors with the ONNX nodes
        List<NodeProto> order = postOrder(g.getNodeList(), g.getOutputList().stream().map(ValueInfoProto::getName).toList());
        List<AnchorScales> ours = AnchorScales.read(quantized.calibration().module());
        for (AnchorScales a : ours) {
            // opset 13's QuantizeLinear has 8-bit outputs only (16-bit ones came with opset 21)
            if (a.quantized() && a.dataQmax() > 255) {
                throw new QdqExportException(a.op() + " #" + a.index() + " reads a 16-bit (mixed precision) activation: QDQ at opset 13 is 8-bit only");
            }
        }
        List<AnchorScales> ourConvs = ours.stream().filter(a -> a.op().equals(Conv2D.NAME)).toList();
        List<AnchorScales> ourDenses = ours.stream().filter(a -> !a.op().equals(Conv2D.NAME)).toList();
        List<NodeProto> convs = order.stream().filter(n -> n.getOpType().equals("Conv") && rank(values.get(n.getInput(1))) == 4).toList();
        List<NodeProto> gemms = order.stream().filter(n -> n.getOpType().equals("Gemm") && values.containsKey(n.getInput(1))
                || n.getOpType().equals("MatMul") && rank(values.get(n.getInput(1))) == 2).toList();
        if (gemms.size() != ourDenses.size()) gemms = gemms.stream().filter(n -> n.getOpType().equals("Gemm")).toList();
        if (convs.size() != ourConvs.size() || gemms.size() != ourDenses.size()) {
            throw new QdqExportException("the module has " + ourConvs.size() + " conv2d and " + ourDenses.size() + " dense, the ONNX graph "
                    + convs.size() + " Conv and " + gemms.size() + " Gemm/MatMul with constant weights: cannot pair them");
        }
        Map<String, AnchorScales> byOutput = new LinkedHashMap<>();
        for (int i = 0; i < convs.size(); i++) pair(convs.get(i), ourConvs.get(i), values, byOutput);
        for (int i = 0; i < gemms.size(); i++) pair(gemms.get(i), ourDenses.get(i), values, byOutput);

        // 3. BatchNormalization folded into the quantized convs; 4. opset 13
        Set<String> quantizedConvs = new HashSet<>();
        byOutput.forEach((out, a) -> {
            if (a.op().equals(Conv2D.NAME)) quantizedConvs.add(out);
        });
        BatchNormFolding.Result folded = BatchNormFolding.fold(g.getNodeList(), quantizedConvs, values, graphOutputs);
        List<NodeProto> nodes = OpsetUpgrade.upgrade(folded.nodes(), opset);
        Map<String, Plan> plans = new LinkedHashMap<>(); // by the node's output name after folding
        List<String> leftFloat = new ArrayList<>();
        byOutput.forEach((out, a) -> {
            Plan p = plan(out, a, folded, values, g.getNodeList());
            if (p != null) plans.put(p.node().getOutput(0), p);
            else leftFloat.add(a.op() + " #" + a.index() + " (ONNX output " + out + ")");
        });

        // 5. which tensor gets which quantization
        Map<String, List<NodeProto>> readers = readers(nodes);
        Map<String, QParams> dataParams = new HashMap<>();
        for (Plan p : plans.values()) dataParams.put(p.node().getInput(0), new QParams((float) p.scales().dataScale(), p.scales().dataUnsigned()));
        Map<String, QParams> outputParams = new LinkedHashMap<>();
        Set<String> droppedRelus = new HashSet<>(); // by the relu's output name
        Map<String, String> outputSource = new HashMap<>(); // quantized tensor -> the tensor its Q reads (the conv's output when a Relu is dropped)
        List<String> toCalibrate = new ArrayList<>();
        Map<String, Boolean> calibrateUnsigned = new HashMap<>();
        for (Plan p : plans.values()) {
            String y = p.node().getOutput(0);
            if (graphOutputs.contains(y)) continue;
            List<NodeProto> rs = readers.getOrDefault(y, List.of());
            NodeProto relu = rs.size() == 1 && rs.getFirst().getOpType().equals("Relu") ? rs.getFirst() : null;
            QParams next = downstream(y, readers, dataParams, plans, graphOutputs);
            if (next != null) {
                if (relu != null && next.unsigned() && !graphOutputs.contains(relu.getOutput(0))) {
                    // the uint8 range with zero point 0 clips at 0 as the Relu did
                    droppedRelus.add(relu.getOutput(0));
                    outputParams.put(relu.getOutput(0), next);
                    outputSource.put(relu.getOutput(0), y);
                } else {
                    outputParams.put(y, next);
                    outputSource.put(y, y);
                }
            } else if (p.node().getOpType().equals("Conv")) {
                boolean unsigned = relu != null && !graphOutputs.contains(relu.getOutput(0));
                String t = unsigned ? relu.getOutput(0) : y;
                if (unsigned) droppedRelus.add(t);
                outputSource.put(t, y);
                toCalibrate.add(t);
                calibrateUnsigned.put(t, unsigned);
            }
        }
        if (!toCalibrate.isEmpty()) {
            List<List<NDArray>> inputs = calibrationInputs.size() > config.calibSamples() ? calibrationInputs.subList(0, config.calibSamples()) : calibrationInputs;
            if (inputs.isEmpty()) throw new QdqExportException(toCalibrate.size() + " conv outputs need a calibrated scale and no calibration inputs were given");
            // the original model computes these tensors under the same names (the folded conv writes its BatchNormalization's output)
            Map<String, List<float[]>> samples = TensorProbe.samples(model, toCalibrate, baseDir, importOptions, inputs);
            for (String t : toCalibrate) {
                boolean unsigned = calibrateUnsigned.get(t);
                double qmax = unsigned ? (1L << config.nbitActivation()) - 1 : (1L << (config.nbitActivation() - 1)) - 1;
                double threshold = Calibration.threshold(samples.get(t), unsigned, config);
                outputParams.put(t, new QParams((float) (threshold > 0 ? threshold / qmax : 1 / qmax), unsigned));
            }
        }

        // 6. the new graph: Q / DQ pairs and the rewired nodes, then put in dependency order
        Emitter e = new Emitter();
        for (Plan p : plans.values()) e.anchor(p);
        List<NodeProto> out = new ArrayList<>(e.prologue);
        Map<String, String> rename = new HashMap<>(); // every node of the graph reading key reads value instead
        Map<String, QParams> onGrid = new HashMap<>(); // tensors that are DQ outputs, with their quantization
        outputParams.forEach((t, q) -> {
            // a dropped Relu's output is written by the DQ itself, so its readers need no renaming
            String dq = droppedRelus.contains(t) ? t : t + "_dq";
            out.addAll(e.qdq(outputSource.get(t), dq, q));
            if (!dq.equals(t)) rename.put(t, dq);
            onGrid.put(dq, q);
        });
        // data inputs: an anchor reads its own DQ unless its input already is one with the same quantization
        Map<String, String> dataDq = new HashMap<>(); // "tensor|params" -> DQ output
        Map<String, String> anchorInput = new HashMap<>(); // anchor output -> its new data input
        for (Plan p : plans.values()) {
            String x = rename.getOrDefault(p.node().getInput(0), p.node().getInput(0));
            QParams q = new QParams((float) p.scales().dataScale(), p.scales().dataUnsigned());
            String dq = q.equals(onGrid.get(x)) ? x : dataDq.get(x + "|" + q);
            if (dq == null) {
                dq = x + "_dq" + dataDq.size();
                dataDq.put(x + "|" + q, dq);
                out.addAll(e.qdq(x, dq, q));
            }
            anchorInput.put(p.node().getOutput(0), dq);
        }
        for (NodeProto n : nodes) {
            if (n.getOpType().equals("Relu") && droppedRelus.contains(n.getOutput(0))) continue;
            NodeProto.Builder b = n.toBuilder();
            for (int i = 0; i < b.getInputCount(); i++) b.setInput(i, rename.getOrDefault(b.getInput(i), b.getInput(i)));
            Plan p = plans.get(n.getOutput(0));
            if (p != null) e.rewire(b, p, anchorInput.get(n.getOutput(0)));
            out.add(b.build());
        }
        List<String> all = new ArrayList<>();
        for (NodeProto n : out) all.addAll(n.getOutputList());
        List<NodeProto> sorted = postOrder(out, all);

        GraphProto.Builder ng = g.toBuilder().clearNode().addAllNode(sorted).addAllInitializer(e.initializers);
        ModelProto result = cleanUp(model.toBuilder().setGraph(ng).build());
        int qConvs = (int) plans.values().stream().filter(p -> p.node().getOpType().equals("Conv")).count();
        return new Result(result, qConvs, plans.size() - qConvs, toCalibrate, leftFloat);
    }

    // ------------------------------------------------------------------ pairing and planning

    private static int rank(NDArray a) {
        return a == null ? -1 : a.rank();
    }

    /** Checks that our anchor's weight is the ONNX node's (transposed for dense over an untransposed B). */
    private static void pair(NodeProto n, AnchorScales a, Map<String, NDArray> values, Map<String, AnchorScales> byOutput) {
        NDArray w = values.get(n.getInput(1));
        boolean transposed = n.getOpType().equals("MatMul") || n.getOpType().equals("Gemm") && attrInt(n, "transB", 0) == 0;
        NDArray mine = a.weight();
        boolean same = mine != null && mine.rank() == w.rank();
        if (same) {
            int[] ws = w.shape(), ms = mine.shape();
            if (transposed) same = ws[0] == ms[1] && ws[1] == ms[0];
            else same = java.util.Arrays.equals(ws, ms);
        }
        if (same) {
            int cols = transposed ? w.dim(1) : 0;
            for (int i = 0; i < w.elementCount() && same; i++) {
                int j = transposed ? (i % cols) * w.dim(0) + i / cols : i;
                same = (float) w.getDouble(i) == (float) mine.getDouble(j);
            }
        }
        if (!same) {
            throw new QdqExportException("node '" + n.getName() + "' (" + n.getOpType() + ") was paired with " + a.op() + " #" + a.index()
                    + " of the module, whose weight differs: the graph and the module do not line up");
        }
        if (a.quantized()) byOutput.put(n.getOutput(0), a);
    }

    /** Weight, scales, bias and axis of a quantized anchor; null for a Gemm whose form ORT's QGemm does not take. */
    private static Plan plan(String out, AnchorScales a, BatchNormFolding.Result folded, Map<String, NDArray> values, List<NodeProto> original) {
        if (a.op().equals(Conv2D.NAME)) {
            BatchNormFolding.Folded f = folded.convs().get(out);
            double[] s = a.weightScales().clone();
            if (f.factor() != null) {
                for (int c = 0; c < s.length; c++) {
                    // a channel whose factor is 0 is all zeros after folding: any positive scale quantizes it to 0
                    if (Math.abs(f.factor()[c]) > 0) s[c] = (float) (s[c] * Math.abs(f.factor()[c]));
                }
            }
            return new Plan(f.conv(), a, f.weight(), s, f.bias(), 0);
        }
        NodeProto n = original.stream().filter(x -> x.getOutputCount() > 0 && x.getOutput(0).equals(out)).findFirst().orElseThrow();
        if (n.getOpType().equals("Gemm")) {
            if (attrFloat(n, "alpha", 1) != 1 || attrFloat(n, "beta", 1) != 1 || attrInt(n, "transA", 0) != 0) return null;
            NDArray c = n.getInputCount() > 2 && !n.getInput(2).isEmpty() ? values.get(n.getInput(2)) : null;
            int units = a.weight().dim(0);
            if (c != null && c.elementCount() != units) return null; // a bias that is not one value per unit stays float: no QGemm
            return new Plan(n, a, values.get(n.getInput(1)), a.weightScales(), c, attrInt(n, "transB", 0) == 0 ? 1 : 0);
        }
        return new Plan(n, a, values.get(n.getInput(1)), a.weightScales(), null, 1);
    }

    /**
     * The quantization our program gives {@code t} downstream: that of the quantized anchors reading it (all alike),
     * or, through a single reader that commutes with quantization, further down; null where a float op reads it.
     */
    private static QParams downstream(String t, Map<String, List<NodeProto>> readers, Map<String, QParams> dataParams, Map<String, Plan> plans,
                                      Set<String> graphOutputs) {
        String cur = t;
        while (!graphOutputs.contains(cur)) {
            List<NodeProto> rs = readers.getOrDefault(cur, List.of());
            if (rs.isEmpty()) return null;
            String c = cur;
            // every reader a quantized anchor taking it as data: the quantization our program requantizes it to
            if (rs.stream().allMatch(r -> plans.containsKey(r.getOutput(0)) && r.getInput(0).equals(c))) return dataParams.get(cur);
            if (rs.size() != 1 || !TRANSPARENT.contains(rs.getFirst().getOpType()) || !rs.getFirst().getInput(0).equals(cur)) return null;
            cur = rs.getFirst().getOutput(0);
        }
        return null;
    }

    // ------------------------------------------------------------------ graph helpers

    /** Nodes reachable from the outputs, inputs before readers, each input in order, each node once (iterative). */
    static List<NodeProto> postOrder(List<NodeProto> nodes, List<String> outputs) {
        Map<String, NodeProto> producer = new HashMap<>();
        for (NodeProto n : nodes) for (String o : n.getOutputList()) producer.put(o, n);
        List<NodeProto> out = new ArrayList<>();
        Set<NodeProto> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (String o : outputs) {
            NodeProto root = producer.get(o);
            if (root == null || !seen.add(root)) continue;
            ArrayDeque<NodeProto> stack = new ArrayDeque<>();
            ArrayDeque<int[]> next = new ArrayDeque<>();
            stack.push(root);
            next.push(new int[] {0});
            while (!stack.isEmpty()) {
                NodeProto n = stack.peek();
                int[] i = next.peek();
                if (i[0] < n.getInputCount()) {
                    NodeProto p = producer.get(n.getInput(i[0]++));
                    if (p != null && seen.add(p)) {
                        stack.push(p);
                        next.push(new int[] {0});
                    }
                } else {
                    out.add(stack.pop());
                    next.pop();
                }
            }
        }
        return out;
    }

    private static Map<String, List<NodeProto>> readers(List<NodeProto> nodes) {
        Map<String, List<NodeProto>> readers = new HashMap<>();
        for (NodeProto n : nodes) for (String in : new LinkedHashSet<>(n.getInputList())) readers.computeIfAbsent(in, k -> new ArrayList<>()).add(n);
        return readers;
    }

    /**
     * Drops nodes nothing reads (the float weights' producers, folded parameters), initializers nothing reads and
     * graph inputs that are initializers (IR 3 listed them; left as inputs they could be overridden, and ORT would not
     * fold them); opset 13, IR version at least 7 (the one opset 13 came with).
     */
    private static ModelProto cleanUp(ModelProto m) {
        GraphProto g = m.getGraph();
        Set<String> outputs = new HashSet<>();
        for (ValueInfoProto o : g.getOutputList()) outputs.add(o.getName());
        List<NodeProto> nodes = new ArrayList<>(g.getNodeList());
        boolean changed = true;
        while (changed) {
            Set<String> read = new HashSet<>(outputs);
            for (NodeProto n : nodes) read.addAll(n.getInputList());
            int before = nodes.size();
            nodes.removeIf(n -> n.getOutputList().stream().noneMatch(read::contains));
            changed = nodes.size() != before;
        }
        Set<String> read = new HashSet<>(outputs);
        for (NodeProto n : nodes) read.addAll(n.getInputList());
        Set<String> produced = new HashSet<>();
        for (NodeProto n : nodes) produced.addAll(n.getOutputList());
        List<TensorProto> inits = g.getInitializerList().stream().filter(t -> read.contains(t.getName())).toList();
        Set<String> initNames = new HashSet<>();
        for (TensorProto t : inits) initNames.add(t.getName());
        List<ValueInfoProto> inputs = g.getInputList().stream().filter(v -> !initNames.contains(v.getName()) && !g.getInitializerList().stream()
                .anyMatch(t -> t.getName().equals(v.getName()))).toList();
        List<ValueInfoProto> infos = g.getValueInfoList().stream().filter(v -> produced.contains(v.getName())).toList();
        GraphProto ng = g.toBuilder().clearNode().addAllNode(nodes).clearInitializer().addAllInitializer(inits).clearInput().addAllInput(inputs)
                .clearValueInfo().addAllValueInfo(infos).build();
        ModelProto.Builder b = m.toBuilder().setGraph(ng).setIrVersion(Math.max(m.getIrVersion(), 7));
        boolean found = false;
        for (int i = 0; i < b.getOpsetImportCount(); i++) {
            OperatorSetIdProto o = b.getOpsetImport(i);
            if (o.getDomain().isEmpty() || o.getDomain().equals("ai.onnx")) {
                b.setOpsetImport(i, o.toBuilder().setVersion(Math.max(o.getVersion(), OpsetUpgrade.TARGET)));
                found = true;
            }
        }
        if (!found) b.addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(OpsetUpgrade.TARGET));
        return b.build();
    }

    static long attrInt(NodeProto n, String name, long dflt) {
        for (AttributeProto a : n.getAttributeList()) if (a.getName().equals(name)) return a.getI();
        return dflt;
    }

    private static float attrFloat(NodeProto n, String name, float dflt) {
        for (AttributeProto a : n.getAttributeList()) if (a.getName().equals(name)) return a.getF();
        return dflt;
    }

    // ------------------------------------------------------------------ writing Q / DQ

    /** Builds the new initializers and Q / DQ nodes, with names unique in the graph. */
    private static final class Emitter {
        final List<TensorProto> initializers = new ArrayList<>();
        final List<NodeProto> prologue = new ArrayList<>();
        private final Map<String, String> weightDq = new HashMap<>(); // anchor output -> weight DQ output
        private final Map<String, String> biasDq = new HashMap<>();
        private int counter;

        private String fresh(String base) {
            return base + "_q" + counter++;
        }

        /** The int8 weight and int32 bias of an anchor, each behind a DequantizeLinear in the prologue. */
        void anchor(Plan p) {
            String out = p.node().getOutput(0);
            NDArray w = p.weight();
            double[] s = p.weightScales();
            int axis = p.weightAxis(), channels = s.length;
            long qmax = p.scales().weightQmax();
            int inner = 1;
            for (int d = axis + 1; d < w.rank(); d++) inner *= w.dim(d);
            byte[] q = new byte[w.elementCount()];
            for (int i = 0; i < q.length; i++) {
                double sc = channels == 1 ? s[0] : s[(i / inner) % channels];
                q[i] = (byte) Math.max(-qmax, Math.min(qmax, SimulatedQuantize.round(w.getDouble(i) / (float) sc)));
            }
            String base = fresh(p.node().getInput(1));
            float[] fs = new float[channels];
            for (int c = 0; c < channels; c++) fs[c] = (float) s[c];
            weightDq.put(out, dequantize(base, NDArray.wrap(DType.INT8, w.shape(), q), fs, new byte[channels], DType.INT8, channels == 1 ? -1 : axis));
            if (p.bias() != null) {
                NDArray b = p.bias();
                int n = b.elementCount();
                int[] bq = new int[n];
                float[] bs = new float[n];
                float sx = (float) p.scales().dataScale();
                for (int c = 0; c < n; c++) {
                    // the fused kernel adds these integers to s_x * s_w accumulators: the scale must be that product in float32
                    bs[c] = sx * fs[channels == 1 ? 0 : c];
                    bq[c] = (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, SimulatedQuantize.round(b.getDouble(c) / bs[c])));
                }
                String bbase = fresh(p.node().getInputCount() > 2 ? p.node().getInput(2) : out + "_bias");
                biasDq.put(out, dequantize(bbase, NDArray.wrap(DType.INT32, new int[] {n}, bq), bs, null, DType.INT32, 0));
            }
        }

        /** Points the anchor's inputs at its data DQ, weight DQ and bias DQ. */
        void rewire(NodeProto.Builder b, Plan p, String data) {
            String out = p.node().getOutput(0);
            b.setInput(0, data);
            b.setInput(1, weightDq.get(out));
            if (biasDq.containsKey(out)) {
                if (b.getInputCount() > 2) b.setInput(2, biasDq.get(out));
                else b.addInput(biasDq.get(out));
            }
        }

        private String dequantize(String base, NDArray q, float[] scales, byte[] zeroPoints, DType dtype, int axis) {
            String qName = base + "_quantized", sName = base + "_scale", zName = base + "_zero_point", out = base + "_dequantized";
            initializers.add(OnnxTensors.fromNDArray(q, qName));
            int[] shape = axis < 0 ? new int[0] : new int[] {scales.length};
            initializers.add(OnnxTensors.fromNDArray(NDArray.wrap(DType.FLOAT32, shape, axis < 0 ? new float[] {scales[0]} : scales), sName));
            NodeProto.Builder dq = NodeProto.newBuilder().setOpType("DequantizeLinear").setName(base + "_DequantizeLinear").addInput(qName).addInput(sName).addOutput(out);
            if (zeroPoints != null) {
                initializers.add(OnnxTensors.fromNDArray(NDArray.wrap(dtype, shape, axis < 0 ? new byte[] {zeroPoints[0]} : zeroPoints), zName));
                dq.addInput(zName);
            } else {
                initializers.add(OnnxTensors.fromNDArray(NDArray.wrap(dtype, shape, axis < 0 ? new int[1] : new int[scales.length]), zName));
                dq.addInput(zName);
            }
            if (axis >= 0) dq.addAttribute(AttributeProto.newBuilder().setName("axis").setType(AttributeProto.AttributeType.INT).setI(axis));
            prologue.add(dq.build());
            return out;
        }

        /** {@code QuantizeLinear(src) -> DequantizeLinear -> dq} with per-tensor uint8 parameters. */
        List<NodeProto> qdq(String src, String dq, QParams q) {
            String base = fresh(src);
            String sName = base + "_scale", zName = base + "_zero_point", qName = base + "_quantized";
            initializers.add(OnnxTensors.fromNDArray(NDArray.scalar(q.scale()), sName));
            initializers.add(OnnxTensors.fromNDArray(NDArray.wrap(DType.UINT8, new int[0], new byte[] {(byte) (q.unsigned() ? 0 : 128)}), zName));
            return List.of(
                    NodeProto.newBuilder().setOpType("QuantizeLinear").setName(base + "_QuantizeLinear").addInput(src).addInput(sName).addInput(zName).addOutput(qName).build(),
                    NodeProto.newBuilder().setOpType("DequantizeLinear").setName(base + "_DequantizeLinear").addInput(qName).addInput(sName).addInput(zName).addOutput(dq).build());
        }
    }
}
