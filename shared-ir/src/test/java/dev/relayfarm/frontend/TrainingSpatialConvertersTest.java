package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.ControlFlowImportTest.graph;
import static dev.relayfarm.frontend.ControlFlowImportTest.real;
import static dev.relayfarm.frontend.OnnxImporterTest.f32;
import static dev.relayfarm.frontend.OnnxImporterTest.i64;
import static dev.relayfarm.frontend.OnnxImporterTest.intAttr;
import static dev.relayfarm.frontend.OnnxImporterTest.ints;
import static dev.relayfarm.frontend.OnnxImporterTest.str;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Hand-checked small cases of the training optimizers (Adagrad, Adam, Momentum), BatchNormalization
 * and Dropout in training mode, Col2Im, MaxUnpool, DeformConv, RoiAlign, antialiased Resize,
 * MelWeightMatrix, Scan before opset 9, an If taken at import time and Range over one-element tensors,
 * with the errors for inputs and attributes outside what they support.
 */
class TrainingSpatialConvertersTest {
    private static final String TRAINING = "ai.onnx.preview.training";

    /**
     * One node over graph inputs a, b, ... (float unless int64 or bool data) and named constants
     * (initializers); runs it in the interpreter and returns its {@code outputs} results.
     */
    private static List<NDArray> run(String domain, String op, long opset, List<NDArray> inputs, Map<String, NDArray> constants, int outputs,
                                     AttributeProto... attrs) {
        GraphProto.Builder g = GraphProto.newBuilder();
        List<String> names = new ArrayList<>();
        List<NDArray> args = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            String name = String.valueOf((char) ('a' + i));
            names.add(name);
            NDArray in = inputs.get(i);
            int type = in.dtype().equals(DType.INT64) ? TensorProto.DataType.INT64_VALUE
                    : in.dtype().equals(DType.BOOL) ? TensorProto.DataType.BOOL_VALUE : TensorProto.DataType.FLOAT_VALUE;
            g.addInput(tensor(name, type, Arrays.stream(in.shape()).boxed().toArray()));
            args.add(in);
        }
        for (Map.Entry<String, NDArray> c : constants.entrySet()) {
            names.add(c.getKey());
            if (c.getValue() != null) g.addInitializer(OnnxTensors.fromNDArray(c.getValue(), c.getKey()));
        }
        List<String> outs = new ArrayList<>();
        for (int i = 0; i < outputs; i++) outs.add("y" + i);
        NodeProto.Builder node = NodeProto.newBuilder().setOpType(op).setName("n").addAllInput(names).addAllOutput(outs).addAllAttribute(List.of(attrs));
        if (!domain.isEmpty()) node.setDomain(domain);
        g.addNode(node);
        for (String o : outs) g.addOutput(tensor(o, TensorProto.DataType.FLOAT_VALUE));
        ModelProto.Builder m = ModelProto.newBuilder().setIrVersion(8).addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(opset)).setGraph(g);
        if (!domain.isEmpty()) m.addOpsetImport(OperatorSetIdProto.newBuilder().setDomain(domain).setVersion(1));
        IRModule module = OnnxImporter.importModel(m.build(), "m.onnx", null, ImportOptions.DEFAULT);
        Value v = Interpreter.runMain(module, args.toArray(NDArray[]::new));
        if (v instanceof TupleValue t) return t.fields().stream().map(f -> ((TensorValue) f).data()).toList();
        return List.of(((TensorValue) v).data());
    }

    private static List<NDArray> run(String domain, String op, long opset, List<NDArray> inputs, int outputs, AttributeProto... attrs) {
        return run(domain, op, opset, inputs, Map.of(), outputs, attrs);
    }

    private static NDArray scalarF(double v) {
        return f32(new int[0], v);
    }

    private static NDArray scalarI(long v) {
        return i64(new int[0], v);
    }

    private static String message(Runnable r) {
        return assertThrows(RuntimeException.class, r::run).getMessage();
    }

    // ------------------------------------------------------------ optimizers

    @Test
    void adagradStepDividesByTheRootOfTheAccumulatedSquares() {
        // r = 1 / (1 + 2·0.5) = 0.5; H' = 0 + 2² = 4; X' = 1 − 0.5·2 / √4 = 0.5
        List<NDArray> y = run(TRAINING, "Adagrad", 17, List.of(scalarF(1), scalarI(2), f32(new int[] {1}, 1), f32(new int[] {1}, 2), f32(new int[] {1}, 0)), 2,
                real("decay_factor", 0.5f), real("epsilon", 0f));
        assertArrayEquals(new float[] {0.5f}, y.get(0).floatData(), 1e-6f);
        assertArrayEquals(new float[] {4}, y.get(1).floatData(), 1e-6f);
    }

    @Test
    void adamStepCorrectsTheLearningRateForTheBias() {
        // g = 0.5; V' = 0.1·0.5 = 0.05; H' = 0.001·0.25; r = 0.1·√0.001 / 0.1; X' = 1 − r·V'/√H' = 1 − 0.1 = 0.9
        List<NDArray> y = run(TRAINING, "Adam", 17, List.of(scalarF(0.1), scalarI(1), f32(new int[] {1}, 1), f32(new int[] {1}, 0.5),
                f32(new int[] {1}, 0), f32(new int[] {1}, 0)), 3, real("epsilon", 0f));
        assertArrayEquals(new float[] {0.9f}, y.get(0).floatData(), 1e-5f);
        assertArrayEquals(new float[] {0.05f}, y.get(1).floatData(), 1e-6f);
        assertArrayEquals(new float[] {0.00025f}, y.get(2).floatData(), 1e-8f);
        // T = 0: no bias correction, and norm_coefficient_post shrinks the result: 0.5·(1 − 0.1·0.05/√0.00025)
        List<NDArray> z = run(TRAINING, "Adam", 17, List.of(scalarF(0.1), scalarI(0), f32(new int[] {1}, 1), f32(new int[] {1}, 0.5),
                f32(new int[] {1}, 0), f32(new int[] {1}, 0)), 3, real("epsilon", 0f), real("norm_coefficient_post", 0.5f));
        assertEquals(0.5 * (1 - 0.1 * 0.05 / Math.sqrt(0.00025)), z.get(0).getDouble(0), 1e-5);
    }

    @Test
    void momentumStandardNesterovAndTheFirstStep() {
        List<NDArray> in = List.of(scalarF(0.5), scalarI(1), f32(new int[] {1}, 1), f32(new int[] {1}, 1), f32(new int[] {1}, 1));
        AttributeProto[] common = {real("alpha", 0.5f), real("beta", 0.5f), real("norm_coefficient", 0f)};
        // V' = 0.5·1 + 0.5·1 = 1; standard X' = 1 − 0.5·1; nesterov X' = 1 − 0.5·(1 + 0.5·1)
        List<NDArray> standard = run(TRAINING, "Momentum", 17, in, 2, with(common, str("mode", "standard")));
        assertArrayEquals(new float[] {0.5f, 1f}, new float[] {standard.get(0).floatData()[0], standard.get(1).floatData()[0]}, 1e-6f);
        List<NDArray> nesterov = run(TRAINING, "Momentum", 17, in, 2, with(common, str("mode", "nesterov")));
        assertEquals(0.25, nesterov.get(0).getDouble(0), 1e-6);
        // T = 0: the gradient enters with weight 1, not beta: V' = 0.5 + 1
        List<NDArray> first = run(TRAINING, "Momentum", 17, List.of(scalarF(0.5), scalarI(0), in.get(2), in.get(3), in.get(4)), 2,
                with(common, str("mode", "standard")));
        assertEquals(1.5, first.get(1).getDouble(0), 1e-6);
    }

    @Test
    void optimizersRejectBadModesMissingAttributesAndUnevenInputLists() {
        List<NDArray> in = List.of(scalarF(0.5), scalarI(1), f32(new int[] {1}, 1), f32(new int[] {1}, 1), f32(new int[] {1}, 1));
        AttributeProto[] common = {real("alpha", 0.5f), real("beta", 0.5f), real("norm_coefficient", 0f)};
        assertTrue(message(() -> run(TRAINING, "Momentum", 17, in, 2, with(common, str("mode", "heavy")))).contains("mode must be 'standard' or 'nesterov', got 'heavy'"));
        assertTrue(message(() -> run(TRAINING, "Momentum", 17, in, 2, common)).contains("attribute 'mode' is required"));
        String uneven = message(() -> run(TRAINING, "Adam", 17, in, 3));
        assertTrue(uneven.contains("expects R, T and 4 lists of equal length (X, G, V, H), got 5 inputs"), uneven);
        String other = message(() -> run("ai.onnx.preview.other", "Adam", 17, in, 1));
        assertTrue(other.contains("operator Adam of domain 'ai.onnx.preview.other' is not supported"), other);
    }

    private static AttributeProto[] with(AttributeProto[] base, AttributeProto extra) {
        AttributeProto[] out = Arrays.copyOf(base, base.length + 1);
        out[base.length] = extra;
        return out;
    }

    // ------------------------------------------------------------ training mode

    @Test
    void batchNormTrainingUsesBatchStatisticsAndUpdatesTheRunningOnes() {
        // x over N = 2, C = 1: batch mean 2, population variance 1; y = (x − 2) / 1
        NDArray x = f32(new int[] {2, 1}, 1, 3);
        Map<String, NDArray> params = new LinkedHashMap<>();
        params.put("scale", f32(new int[] {1}, 1));
        params.put("bias", f32(new int[] {1}, 0));
        params.put("mean", f32(new int[] {1}, 0));
        params.put("var", f32(new int[] {1}, 3));
        List<NDArray> y = run("", "BatchNormalization", 15, List.of(x), params, 3, intAttr("training_mode", 1), real("epsilon", 0f),
                real("momentum", 0.5f));
        assertArrayEquals(new float[] {-1, 1}, y.get(0).floatData(), 1e-6f);
        assertArrayEquals(new float[] {1}, y.get(1).floatData(), 1e-6f); // 0·0.5 + 2·0.5
        assertArrayEquals(new float[] {2}, y.get(2).floatData(), 1e-6f); // 3·0.5 + 1·0.5
    }

    @Test
    void dropoutTrainingWithRatioZeroIsTheIdentityAndARandomMaskIsRefused() {
        NDArray x = f32(new int[] {3}, 1, -2, 3);
        Map<String, NDArray> zero = new LinkedHashMap<>();
        zero.put("ratio", scalarF(0));
        zero.put("training", NDArray.fromLongs(DType.BOOL, new int[0], new long[] {1}));
        List<NDArray> y = run("", "Dropout", 13, List.of(x), zero, 2);
        assertArrayEquals(new float[] {1, -2, 3}, y.get(0).floatData());
        for (int i = 0; i < 3; i++) assertTrue(y.get(1).getBoolean(i));
        Map<String, NDArray> half = new LinkedHashMap<>(zero);
        half.put("ratio", scalarF(0.5));
        String e = message(() -> run("", "Dropout", 13, List.of(x), half, 1));
        assertTrue(e.contains("training_mode=True with ratio 0.5 draws a random mask"), e);
    }

    // ------------------------------------------------------------ Col2Im, MaxUnpool

    @Test
    void col2imAddsOverlappingBlocks() {
        // image 1x3, blocks 1x2 at two positions: pixel 1 is covered by offset 1 of position 0 and offset 0 of position 1
        NDArray cols = f32(new int[] {1, 2, 2}, 1, 2, 3, 4); // rows: block offsets 0 and 1; columns: positions 0 and 1
        Map<String, NDArray> shapes = new LinkedHashMap<>();
        shapes.put("image", i64(new int[] {2}, 1, 3));
        shapes.put("block", i64(new int[] {2}, 1, 2));
        NDArray y = run("", "Col2Im", 18, List.of(cols), shapes, 1).getFirst();
        assertArrayEquals(new int[] {1, 1, 1, 3}, y.shape());
        assertArrayEquals(new float[] {1, 2 + 3, 4}, y.floatData());
        // stride 2 leaves one position, pads 1 on the left shift it: offset 0 lands in the padding
        NDArray one = f32(new int[] {1, 2, 1}, 7, 8);
        shapes.put("image", i64(new int[] {2}, 1, 2));
        NDArray p = run("", "Col2Im", 18, List.of(one), shapes, 1, ints("pads", 0, 1, 0, 0), ints("strides", 1, 2)).getFirst();
        assertArrayEquals(new float[] {8, 0}, p.floatData());
    }

    @Test
    void col2imRejectsAMismatchedNumberOfBlocks() {
        Map<String, NDArray> shapes = new LinkedHashMap<>();
        shapes.put("image", i64(new int[] {2}, 1, 4));
        shapes.put("block", i64(new int[] {2}, 1, 2));
        String e = message(() -> run("", "Col2Im", 18, List.of(f32(new int[] {1, 2, 2}, 1, 2, 3, 4)), shapes, 1));
        assertTrue(e.contains("input has 2 block positions, the image and block shapes give 3"), e);
    }

    @Test
    void maxUnpoolPutsValuesAtTheirIndicesAndPadsToOutputShape() {
        NDArray x = f32(new int[] {1, 1, 1, 2}, 5, 6);
        NDArray idx = i64(new int[] {1, 1, 1, 2}, 1, 2);
        AttributeProto[] window = {ints("kernel_shape", 1, 2), ints("strides", 1, 2)};
        NDArray y = run("", "MaxUnpool", 11, List.of(x, idx), Map.of(), 1, window).getFirst();
        assertArrayEquals(new float[] {0, 5, 6, 0}, y.floatData());
        Map<String, NDArray> shape = Map.of("shape", i64(new int[] {4}, 1, 1, 2, 4));
        NDArray padded = run("", "MaxUnpool", 11, List.of(x, idx), shape, 1, window).getFirst();
        assertArrayEquals(new int[] {1, 1, 2, 4}, padded.shape());
        assertArrayEquals(new float[] {0, 5, 6, 0, 0, 0, 0, 0}, padded.floatData());
        String e = message(() -> run("", "MaxUnpool", 11, List.of(x, idx), Map.of("shape", i64(new int[] {4}, 1, 1, 1, 3)), 1, window));
        assertTrue(e.contains("must keep N and C and not be smaller than the default output [1, 1, 1, 4]"), e);
    }

    // ------------------------------------------------------------ Resize antialias

    @Test
    void antialiasedLinearHalvingAveragesFourPixelsWithTriangleWeights() {
        // scale 0.5 widens the triangle to 4 taps, weights 1,3,3,1 / 8 around the source coordinate; the edge repeats
        double[] w = ImageConverters.interpolationMatrix(4, 2, 0.5, "half_pixel", false, -0.75, false);
        assertArrayEquals(new double[] {0.5, 0.375, 0.125, 0, 0, 0.125, 0.375, 0.5}, w, 1e-12);
        // exclude_outside drops the tap beyond the edge and renormalizes: 3/7, 3/7, 1/7
        double[] ex = ImageConverters.interpolationMatrix(4, 2, 0.5, "half_pixel", false, -0.75, true);
        assertArrayEquals(new double[] {3.0 / 7, 3.0 / 7, 1.0 / 7, 0}, Arrays.copyOf(ex, 4), 1e-12);
        Map<String, NDArray> rs = new LinkedHashMap<>();
        rs.put("", null); // no roi
        rs.put("scales", f32(new int[] {4}, 1, 1, 1, 0.5));
        NDArray y = run("", "Resize", 18, List.of(f32(new int[] {1, 1, 1, 4}, 1, 2, 3, 4)), rs, 1, intAttr("antialias", 1), str("mode", "linear"))
                .getFirst();
        assertArrayEquals(new float[] {1.625f, 3.375f}, y.floatData(), 1e-6f);
        String e = message(() -> run("", "Resize", 18, List.of(f32(new int[] {1, 1, 1, 4}, 1, 2, 3, 4)), rs, 1, intAttr("antialias", 1),
                str("mode", "linear"), str("coordinate_transformation_mode", "tf_crop_and_resize")));
        assertTrue(e.contains("antialias=1 with coordinate_transformation_mode=tf_crop_and_resize is not supported"), e);
    }

    @Test
    void antialiasedCubicRowsSumToOne() {
        double[] w = ImageConverters.interpolationMatrix(9, 4, 4.0 / 9, "half_pixel", true, -0.5, false);
        for (int o = 0; o < 4; o++) assertEquals(1, Arrays.stream(w, o * 9, o * 9 + 9).sum(), 1e-12);
    }

    // ------------------------------------------------------------ If at import time, Range

    @Test
    void ifWithAConstantConditionConvertsOnlyTheTakenBranch() {
        // the else branch uses an operator nobody converts: importing must not touch it
        GraphProto.Builder then = GraphProto.newBuilder().setName("then")
                .addNode(NodeProto.newBuilder().setOpType("Neg").addInput("x").addOutput("t")).addOutput(tensor("t", TensorProto.DataType.FLOAT_VALUE, 2));
        GraphProto.Builder other = GraphProto.newBuilder().setName("else")
                .addNode(NodeProto.newBuilder().setOpType("Frobnicate").addInput("x").addOutput("e")).addOutput(tensor("e", TensorProto.DataType.FLOAT_VALUE, 2));
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", TensorProto.DataType.FLOAT_VALUE, 2))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.fromLongs(DType.BOOL, new int[0], new long[] {1}), "c"))
                .addNode(NodeProto.newBuilder().setOpType("If").addInput("c").addOutput("y").addAttribute(graph("then_branch", then))
                        .addAttribute(graph("else_branch", other)))
                .addOutput(tensor("y", TensorProto.DataType.FLOAT_VALUE, 2));
        IRModule m = OnnxImporter.importModel(OnnxImporterTest.model(17, g), "if.onnx", null, ImportOptions.DEFAULT);
        assertTrue(ExprTraversal.postOrder(m.main().orElseThrow()).stream().noneMatch(e -> e instanceof If));
        NDArray y = ((TensorValue) Interpreter.runMain(m, f32(new int[] {2}, 1, -2))).data();
        assertArrayEquals(new float[] {-1, 2}, y.floatData());
    }

    @Test
    void rangeTakesOneElementTensorsButNotLongerOnes() {
        NDArray y = run("", "Range", 11, List.of(i64(new int[] {1}, 1), i64(new int[] {1}, 4), i64(new int[0], 1)), 1).getFirst();
        assertArrayEquals(new long[] {1, 2, 3}, new long[] {y.getLong(0), y.getLong(1), y.getLong(2)});
        String e = message(() -> run("", "Range", 11, List.of(i64(new int[] {2}, 1, 2), i64(new int[0], 4), i64(new int[0], 1)), 1));
        assertTrue(e.contains("input 0 must be a scalar (or hold one element)"), e);
    }

    // ------------------------------------------------------------ MelWeightMatrix, Scan opset 8

    @Test
    void melWeightMatrixBuildsUnitPeakTriangles() {
        Map<String, NDArray> args = new LinkedHashMap<>();
        args.put("mels", i64(new int[0], 2));
        args.put("dft", i64(new int[0], 8));
        args.put("rate", i64(new int[0], 8000));
        args.put("lower", scalarF(0));
        args.put("upper", scalarF(4000));
        NDArray w = run("", "MelWeightMatrix", 17, List.of(), args, 1).getFirst();
        assertArrayEquals(new int[] {5, 2}, w.shape());
        // mel points 0, 1/4, 2/4, 3/4 of mel(4000) map to bins 0, 0, 1, 2 (⌊9·f/8000⌋): band 0 a single 1 at bin 0 falling to 0
        // at bin 1, band 1 rising from bin 0 to 1 at bin 1 and falling to 0 at bin 2
        assertArrayEquals(new float[] {1, 0, 0, 1, 0, 0, 0, 0, 0, 0}, w.floatData());
        args.put("upper", scalarF(20000));
        String e = message(() -> run("", "MelWeightMatrix", 17, List.of(), args, 1));
        assertTrue(e.contains("band 1 reaches spectrogram bin"), e);
    }

    @Test
    void scanBeforeOpset9RunsEachBatchElement() {
        GraphProto.Builder body = GraphProto.newBuilder().setName("body")
                .addInput(tensor("s", TensorProto.DataType.FLOAT_VALUE, 1)).addInput(tensor("x", TensorProto.DataType.FLOAT_VALUE, 1))
                .addNode(NodeProto.newBuilder().setOpType("Add").addInput("s").addInput("x").addOutput("t"))
                .addNode(NodeProto.newBuilder().setOpType("Identity").addInput("t").addOutput("o"))
                .addOutput(tensor("t", TensorProto.DataType.FLOAT_VALUE, 1)).addOutput(tensor("o", TensorProto.DataType.FLOAT_VALUE, 1));
        Map<String, NDArray> noLens = new LinkedHashMap<>();
        noLens.put("", null);
        // two batch elements, three steps each: running sums per element
        NDArray init = f32(new int[] {2, 1}, 0, 10);
        NDArray xs = f32(new int[] {2, 3, 1}, 1, 2, 3, 4, 5, 6);
        List<NDArray> y = runFirst(body, init, xs, List.of());
        assertArrayEquals(new float[] {6, 25}, y.get(0).floatData());
        assertArrayEquals(new float[] {1, 3, 6, 14, 19, 25}, y.get(1).floatData());
        assertArrayEquals(new float[] {3, 3, 1}, new float[] {y.get(1).shape()[1], y.get(1).shape()[0] + 1, y.get(1).shape()[2]});
        // reverse direction sums from the end
        List<NDArray> r = runFirst(body, init, xs, List.of(ints("directions", 1)));
        assertArrayEquals(new float[] {3, 5, 6, 16, 21, 25}, r.get(1).floatData());
    }

    /** Scan opset 8 with sequence_lens left out ("" first input), state input a, scan input b. */
    private static List<NDArray> runFirst(GraphProto.Builder body, NDArray init, NDArray xs, List<AttributeProto> extra) {
        List<AttributeProto> attrs = new ArrayList<>(List.of(graph("body", body), intAttr("num_scan_inputs", 1)));
        attrs.addAll(extra);
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("a", TensorProto.DataType.FLOAT_VALUE, 2, 1)).addInput(tensor("b", TensorProto.DataType.FLOAT_VALUE, 2, 3, 1))
                .addNode(NodeProto.newBuilder().setOpType("Scan").addInput("").addInput("a").addInput("b").addOutput("y").addOutput("z").addAllAttribute(attrs))
                .addOutput(tensor("y", TensorProto.DataType.FLOAT_VALUE)).addOutput(tensor("z", TensorProto.DataType.FLOAT_VALUE));
        IRModule m = OnnxImporter.importModel(OnnxImporterTest.model(8, g), "scan.onnx", null, ImportOptions.DEFAULT);
        TupleValue t = (TupleValue) Interpreter.runMain(m, init, xs);
        return t.fields().stream().map(f -> ((TensorValue) f).data()).toList();
    }

    // ------------------------------------------------------------ RoiAlign

    @Test
    void roiAlignAveragesBilinearSamplesPerBin() {
        NDArray x = f32(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        NDArray batch = i64(new int[] {1}, 0);
        // one bin over the roi (0,0)-(1,1): output_half_pixel samples its centre (0.5, 0.5), half_pixel shifts it to (0, 0)
        NDArray unit = f32(new int[] {1, 4}, 0, 0, 1, 1);
        assertArrayEquals(new float[] {2.5f}, run("", "RoiAlign", 16, List.of(x, unit, batch), 1, intAttr("sampling_ratio", 1),
                str("coordinate_transformation_mode", "output_half_pixel")).getFirst().floatData(), 1e-6f);
        assertArrayEquals(new float[] {1f}, run("", "RoiAlign", 16, List.of(x, unit, batch), 1, intAttr("sampling_ratio", 1)).getFirst().floatData(), 1e-6f);
        // 2x2 bins over (0,0)-(2,2): samples at 0.5 and 1.5 per axis; 1.5 lies past the last pixel centre and reads it
        NDArray whole = f32(new int[] {1, 4}, 0, 0, 2, 2);
        NDArray y = run("", "RoiAlign", 16, List.of(x, whole, batch), 1, intAttr("sampling_ratio", 1), intAttr("output_height", 2),
                intAttr("output_width", 2), str("coordinate_transformation_mode", "output_half_pixel")).getFirst();
        assertArrayEquals(new int[] {1, 1, 2, 2}, y.shape());
        assertArrayEquals(new float[] {2.5f, 3f, 3.5f, 4f}, y.floatData(), 1e-6f);
    }

    @Test
    void roiAlignMaxTakesTheLargestWeightedCornerOverTheSamples() {
        NDArray x = f32(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        NDArray batch = i64(new int[] {1}, 0);
        // one bin over (0,0)-(1,1), one sample at (0.5, 0.5): corners weigh 0.25 each, the largest is 0.25·4
        NDArray unit = f32(new int[] {1, 4}, 0, 0, 1, 1);
        assertArrayEquals(new float[] {1f}, run("", "RoiAlign", 16, List.of(x, unit, batch), 1, intAttr("sampling_ratio", 1), str("mode", "max"),
                str("coordinate_transformation_mode", "output_half_pixel")).getFirst().floatData(), 1e-6f);
        // two samples per axis over (0,0)-(2,2) in one bin: at (1.5, 1.5) every corner is pixel 4 with weight 1
        NDArray whole = f32(new int[] {1, 4}, 0, 0, 2, 2);
        assertArrayEquals(new float[] {4f}, run("", "RoiAlign", 16, List.of(x, whole, batch), 1, intAttr("sampling_ratio", 2), str("mode", "max"),
                str("coordinate_transformation_mode", "output_half_pixel")).getFirst().floatData(), 1e-6f);
    }

    @Test
    void roiAlignRejectsTheAdaptiveSamplingRatio() {
        NDArray x = f32(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        String e = message(() -> run("", "RoiAlign", 16, List.of(x, f32(new int[] {1, 4}, 0, 0, 1, 1), i64(new int[] {1}, 0)), 1));
        assertTrue(e.contains("sampling_ratio=0 (adaptive: a sample count per roi from its size) is not supported"), e);
    }

    // ------------------------------------------------------------ DeformConv

    @Test
    void deformConvSamplesAtTheOffsetTapsWithZerosOutside() {
        NDArray x = f32(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        NDArray w = f32(new int[] {1, 1, 1, 1}, 1);
        // a 1x1 kernel: pixel (0,0) moves half a pixel right (1.5), pixel (1,1) one down, off the image (0)
        NDArray offset = f32(new int[] {1, 2, 2, 2}, 0, 0, 0, 1, 0.5, 0, 0, 0);
        assertArrayEquals(new float[] {1.5f, 2, 3, 0}, run("", "DeformConv", 19, List.of(x, w, offset), 1).getFirst().floatData(), 1e-6f);
        // bias 1 and a mask of 0.5 on every tap
        NDArray bias = f32(new int[] {1}, 1);
        NDArray mask = f32(new int[] {1, 1, 2, 2}, 0.5, 0.5, 0.5, 0.5);
        assertArrayEquals(new float[] {1.75f, 2, 2.5f, 1}, run("", "DeformConv", 19, List.of(x, w, offset, bias, mask), 1).getFirst().floatData(), 1e-6f);
        String e = message(() -> run("", "DeformConv", 19, List.of(x, w, f32(new int[] {1, 4, 2, 2}, new double[16])), 1));
        assertTrue(e.contains("needs 2 channels (offset_group x taps x 2)"), e);
    }
}
