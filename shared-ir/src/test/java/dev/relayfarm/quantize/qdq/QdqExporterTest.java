package dev.relayfarm.quantize.qdq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.frontend.OnnxTensors;
import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TensorShapeProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.quantize.AnchorScales;
import dev.relayfarm.quantize.QuantizeConfig;
import dev.relayfarm.quantize.Quantizer;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The QDQ export of a small opset-11 network, {@code x[1,3,8,8] -> Conv -> BatchNormalization -> Relu -> MaxPool ->
 * Conv(+bias) -> BatchNormalization -> Relu -> Flatten -> Gemm -> Softmax}, every layer int8: first its structure, then
 * its numbers, re-imported by our importer (which composes QuantizeLinear / DequantizeLinear from float ops) against
 * our int8 interpreter.
 */
class QdqExporterTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;
    private static ModelProto model;
    private static IRModule imported;
    private static List<List<NDArray>> calibration;
    private static Quantizer.Result quantized;
    private static QdqExporter.Result exported;
    private static final QuantizeConfig CONFIG = QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of());

    @BeforeAll
    static void export() {
        Random r = new Random(7);
        GraphProto.Builder g = GraphProto.newBuilder().setName("tiny").addInput(tensor("x", 1, 3, 8, 8)).addOutput(tensor("prob", 1, 10));
        g.addInitializer(init("W0", random(r, 1, 4, 3, 3, 3)));
        // channel 1's scale is negative: its folded int8 weights flip sign
        g.addInitializer(init("g0", NDArray.fromDoubles(DType.FLOAT32, new int[] {4}, new double[] {0.9, -1.3, 1.1, 0.6})));
        g.addInitializer(init("b0", random(r, 0.2, 4))).addInitializer(init("m0", random(r, 0.3, 4))).addInitializer(init("v0", positive(r, 4)));
        g.addInitializer(init("W1", random(r, 0.5, 6, 4, 3, 3))).addInitializer(init("B1", random(r, 0.1, 6)));
        g.addInitializer(init("g1", positive(r, 6))).addInitializer(init("b1", random(r, 0.2, 6))).addInitializer(init("m1", random(r, 0.3, 6)))
                .addInitializer(init("v1", positive(r, 6)));
        g.addInitializer(init("W2", random(r, 0.3, 10, 24))).addInitializer(init("B2", random(r, 0.1, 10)));
        g.addNode(node("Conv", "conv0", List.of("x", "W0"), List.of("c0"), ints("pads", 1, 1, 1, 1)));
        g.addNode(node("BatchNormalization", "bn0", List.of("c0", "g0", "b0", "m0", "v0"), List.of("n0")));
        g.addNode(node("Relu", "relu0", List.of("n0"), List.of("r0")));
        g.addNode(node("MaxPool", "pool0", List.of("r0"), List.of("p0"), ints("kernel_shape", 2, 2), ints("strides", 2, 2)));
        g.addNode(node("Conv", "conv1", List.of("p0", "W1", "B1"), List.of("c1")));
        g.addNode(node("BatchNormalization", "bn1", List.of("c1", "g1", "b1", "m1", "v1"), List.of("n1")));
        g.addNode(node("Relu", "relu1", List.of("n1"), List.of("r1")));
        g.addNode(node("Flatten", "flat", List.of("r1"), List.of("f")));
        g.addNode(node("Gemm", "fc", List.of("f", "W2", "B2"), List.of("logits"),
                AttributeProto.newBuilder().setName("transB").setType(AttributeProto.AttributeType.INT).setI(1).build()));
        g.addNode(node("Softmax", "softmax", List.of("logits"), List.of("prob")));
        model = ModelProto.newBuilder().setIrVersion(6).addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(11)).setGraph(g).build();
        imported = TypeInference.infer(OnnxImporter.importModel(model, "tiny.onnx", null, ImportOptions.DEFAULT)).module();
        calibration = new ArrayList<>();
        for (long s = 0; s < 32; s++) calibration.add(List.of(input(s)));
        quantized = Quantizer.quantize(imported, calibration, CONFIG);
        exported = QdqExporter.export(model, null, ImportOptions.DEFAULT, quantized, calibration, CONFIG);
    }

    @Test
    void foldsBatchNormAndWritesInt8WeightsInt32BiasesPerChannel() {
        ModelProto m = exported.model();
        GraphProto g = m.getGraph();
        assertEquals(2, exported.quantizedConvs());
        assertEquals(1, exported.quantizedMatMuls());
        assertEquals(13, OnnxModels.opsets(m).get(""), "per-axis DequantizeLinear needs opset 13");
        Map<String, Integer> ops = new HashMap<>();
        for (NodeProto n : g.getNodeList()) ops.merge(n.getOpType(), 1, Integer::sum);
        assertFalse(ops.containsKey("BatchNormalization"), "BatchNormalization should be folded into the convs: " + ops);
        // both relus are dropped: the uint8 outputs with zero point 0 clip at 0 themselves
        assertFalse(ops.containsKey("Relu"), "the relus after the convs should be dropped: " + ops);
        Map<String, NodeProto> producer = new HashMap<>();
        for (NodeProto n : g.getNodeList()) for (String o : n.getOutputList()) producer.put(o, n);
        Map<String, TensorProto> inits = new HashMap<>();
        for (TensorProto t : g.getInitializerList()) inits.put(t.getName(), t);
        List<AnchorScales> ours = AnchorScales.read(quantized.calibration().module());
        int conv = 0;
        for (NodeProto n : g.getNodeList()) {
            if (!n.getOpType().equals("Conv") && !n.getOpType().equals("Gemm")) continue;
            for (int i = 0; i < 3; i++) assertEquals("DequantizeLinear", producer.get(n.getInput(i)).getOpType(), n.getName() + " input " + i);
            NodeProto wdq = producer.get(n.getInput(1)), bdq = producer.get(n.getInput(2));
            assertEquals(0, QdqExporter.attrInt(wdq, "axis", 1), "weights are per output channel (axis 0)");
            TensorProto wq = inits.get(wdq.getInput(0)), bq = inits.get(bdq.getInput(0));
            assertEquals(TensorProto.DataType.INT8_VALUE, wq.getDataType());
            assertEquals(TensorProto.DataType.INT32_VALUE, bq.getDataType());
            TensorProto ws = inits.get(wdq.getInput(1));
            assertEquals(wq.getDims(0), ws.getDims(0), "one weight scale per output channel");
            // the bias scale is the data scale times each channel's weight scale, in float32
            NodeProto xdq = producer.get(n.getInput(0));
            float sx = OnnxTensors.toNDArray(inits.get(xdq.getInput(1)), null, "sx").floatData()[0];
            float[] sw = OnnxTensors.toNDArray(ws, null, "sw").floatData(), sb = OnnxTensors.toNDArray(inits.get(bdq.getInput(1)), null, "sb").floatData();
            for (int c = 0; c < sw.length; c++) assertEquals(sx * sw[c], sb[c], 0f, "bias scale of channel " + c);
            if (n.getOpType().equals("Conv")) {
                // the folded int8 weights are ours up to each channel's sign: per-channel quantization commutes with BN's factor
                AnchorScales a = ours.get(conv++);
                NDArray q = OnnxTensors.toNDArray(wq, null, "wq"), w = a.weight();
                double[] gamma = conv == 1 ? new double[] {0.9, -1.3, 1.1, 0.6} : null;
                int inner = w.elementCount() / w.dim(0);
                int differ = 0;
                for (int i = 0; i < w.elementCount(); i++) {
                    int c = i / inner;
                    long mine = Math.round(w.getDouble(i) / (float) a.weightScales()[c]);
                    long sign = gamma != null && gamma[c] < 0 ? -1 : 1;
                    if (q.getLong(i) != sign * mine) differ++;
                }
                // folding rounds W * k in float32: a weight sitting on a half level may land one level over
                assertTrue(differ <= w.elementCount() / 100, n.getName() + ": " + differ + " of " + w.elementCount() + " int8 weights differ from ours");
            }
        }
        assertEquals(2, conv);
        // every activation Q is uint8: zero point 0 after a relu, 128 on the signed input
        for (NodeProto n : g.getNodeList()) {
            if (!n.getOpType().equals("QuantizeLinear")) continue;
            TensorProto zp = inits.get(n.getInput(2));
            assertEquals(TensorProto.DataType.UINT8_VALUE, zp.getDataType());
            long z = OnnxTensors.toNDArray(zp, null, "zp").getLong(0);
            assertTrue(z == (n.getInput(0).equals("x") ? 128 : 0), n.getName() + " reads " + n.getInput(0) + " with zero point " + z);
        }
        assertTrue(exported.calibratedOutputs().isEmpty(), "every conv output here is requantized by our program: " + exported.calibratedOutputs());
        assertEquals(List.of(), exported.leftFloat(), "every anchor our program quantized has its QDQ form");
    }

    /**
     * Our importer runs the exported QDQ graph in float (QuantizeLinear / DequantizeLinear composed of float ops), our
     * int8 interpreter runs integers. Both quantize the same tensors with the same scales; they differ only where float
     * rounding (BatchNormalization folded into the weights there, applied in float after the conv here; float sums of
     * dequantized products against int32 sums) moves an intermediate value across a rounding boundary, by one level.
     * So the outputs (softmax probabilities) must agree to within 0.005 (measured: 8.5e-4 over 20 inputs), and at least
     * ten times closer than our int8 program is to float (4.3e-2): a wrong scale, sign or zero point would be as far
     * off as float or further.
     */
    @Test
    void reimportedQdqModelComputesOurInt8Numbers() {
        IRModule qdq = TypeInference.infer(OnnxImporter.importModel(exported.model(), "tiny-qdq.onnx", null, ImportOptions.DEFAULT)).module();
        double worst = 0, worstFloat = 0;
        for (long s = 1000; s < 1020; s++) {
            NDArray x = input(s);
            NDArray ours = run(quantized.module(), x), theirs = run(qdq, x), fl = run(imported, x);
            for (int i = 0; i < ours.elementCount(); i++) {
                worst = Math.max(worst, Math.abs(ours.getDouble(i) - theirs.getDouble(i)));
                worstFloat = Math.max(worstFloat, Math.abs(ours.getDouble(i) - fl.getDouble(i)));
            }
        }
        System.out.printf("tiny QDQ export: max |int8 ours - QDQ re-imported| %.2e, max |int8 ours - float| %.2e (probabilities)%n", worst, worstFloat);
        assertTrue(worst <= 0.005, "the QDQ model's probabilities differ from our int8 program's by " + worst);
        assertTrue(worst * 10 <= worstFloat, "the QDQ model (" + worst + ") should be far closer to our int8 program than float is (" + worstFloat + ")");
    }

    /**
     * The exported QDQ model through our integer path ({@link QdqPairs} → import → {@link Quantizer#realizeQdq}): its
     * pairs become points, its convs and the dense run on integers (int32 accumulators), and it computes our int8
     * program's numbers within the same bound as its float reading above; the export's extra output pairs (a conv
     * output our program dequantizes) are one more rounding, so not bit for bit.
     */
    @Test
    void qdqModelCompilesThroughTheIntegerPath() {
        QdqPairs.Result marked = QdqPairs.mark(exported.model(), null);
        // every pair the export wrote is symmetric (zero point 0 or 128): each of its QuantizeLinear nodes becomes a point
        long quantizes = exported.model().getGraph().getNodeList().stream().filter(n -> n.getOpType().equals("QuantizeLinear")).count();
        assertTrue(quantizes >= 3, "the export quantizes each anchor's data: " + quantizes);
        assertEquals(quantizes, marked.pairs(), "pairs made points");
        IRModule points = TypeInference.infer(OnnxImporter.importModel(marked.model(), "tiny-qdq.onnx", null, ImportOptions.DEFAULT)).module();
        IRModule integer = Quantizer.realizeQdq(points, QuantizeConfig.Requantize.FIXED_POINT);
        String text = dev.relayfarm.text.RelayPrinter.print(integer);
        int accumulators = text.split("out_dtype=\"int32\"", -1).length - 1;
        assertEquals(exported.quantizedConvs() + exported.quantizedMatMuls(), accumulators, "every quantized conv / dense on integers:\n" + text);
        assertFalse(text.contains("simulated_quantize"), "every point realized");
        double worst = 0;
        for (long s = 1000; s < 1020; s++) {
            NDArray x = input(s);
            NDArray ours = run(quantized.module(), x), theirs = run(integer, x);
            for (int i = 0; i < ours.elementCount(); i++) worst = Math.max(worst, Math.abs(ours.getDouble(i) - theirs.getDouble(i)));
        }
        System.out.printf("tiny QDQ export on our integer path: max |int8 ours - QDQ integer| %.2e (probabilities)%n", worst);
        assertTrue(worst <= 0.005, "the QDQ model's integer program differs from our int8 program's by " + worst);
    }

    /** A pair with an asymmetric zero point is not ours to take: it stays QuantizeLinear → DequantizeLinear. */
    @Test
    void asymmetricPairsStayFloat() {
        ModelProto.Builder m = exported.model().toBuilder();
        GraphProto.Builder g = m.getGraphBuilder();
        int changed = 0;
        for (int i = 0; i < g.getInitializerCount(); i++) {
            TensorProto t = g.getInitializer(i);
            if (t.getDataType() == TensorProto.DataType.UINT8_VALUE && t.getDimsCount() == 0) {
                g.setInitializer(i, dev.relayfarm.frontend.OnnxTensors.fromNDArray(NDArray.fromLongs(dev.relayfarm.ir.DType.UINT8, new int[0], new long[] {3}), t.getName()));
                changed++;
            }
        }
        assertTrue(changed > 0, "the export has uint8 zero points");
        assertEquals(0, QdqPairs.mark(m.build(), null).pairs());
    }

    private static NDArray run(IRModule m, NDArray x) {
        return ((TensorValue) Interpreter.runMain(m, x)).data();
    }

    private static NDArray input(long seed) {
        return random(new Random(seed), 1, 1, 3, 8, 8);
    }

    private static NDArray random(Random r, double scale, int... shape) {
        float[] v = new float[NDArray.elementCount(DType.FLOAT32, shape)];
        for (int i = 0; i < v.length; i++) v[i] = (float) (scale * (2 * r.nextDouble() - 1));
        return NDArray.wrap(DType.FLOAT32, shape, v);
    }

    private static NDArray positive(Random r, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) v[i] = (float) (0.5 + r.nextDouble());
        return NDArray.wrap(DType.FLOAT32, new int[] {n}, v);
    }

    private static TensorProto init(String name, NDArray a) {
        return OnnxTensors.fromNDArray(a, name);
    }

    private static ValueInfoProto tensor(String name, long... dims) {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder();
        for (long d : dims) s.addDim(TensorShapeProto.Dimension.newBuilder().setDimValue(d));
        return ValueInfoProto.newBuilder().setName(name)
                .setType(TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(F).setShape(s))).build();
    }

    private static NodeProto node(String op, String name, List<String> in, List<String> out, AttributeProto... attrs) {
        return NodeProto.newBuilder().setOpType(op).setName(name).addAllInput(in).addAllOutput(out).addAllAttribute(List.of(attrs)).build();
    }

    private static AttributeProto ints(String name, long... v) {
        AttributeProto.Builder b = AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INTS);
        for (long x : v) b.addInts(x);
        return b.build();
    }
}
