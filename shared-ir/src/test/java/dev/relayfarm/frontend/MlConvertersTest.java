package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.intAttr;
import static dev.relayfarm.frontend.OnnxImporterTest.ints;
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
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ai.onnx.ml TreeEnsemble beyond the node suite's two trees of LEQ/MEMBER nodes: two trees averaged,
 * the LT/GT/EQ/NEQ modes, a NaN feature following nodes_missing_value_tracks_true, and the refusals.
 */
class MlConvertersTest {
    // Tree A (root 0): x0 < 2 ? leaf0 (t0: 10) : (x1 == 5 ? leaf1 (t0: 20) : leaf2 (t1: 30))
    // Tree B (root 2): x0 > 4 or NaN ? leaf3 (t0: 100) : (x1 != 5 ? leaf4 (t1: 200) : leaf5 (t1: 300))
    private static List<AttributeProto> twoTrees(long aggregate) {
        return new ArrayList<>(List.of(
                ints("nodes_featureids", 0, 1, 0, 1),
                tensorAttr("nodes_modes", TensorProto.newBuilder().setDataType(TensorProto.DataType.UINT8_VALUE).addDims(4).addInt32Data(1).addInt32Data(4).addInt32Data(3).addInt32Data(5)),
                tensorAttr("nodes_splits", TensorProto.newBuilder().setDataType(TensorProto.DataType.FLOAT_VALUE).addDims(4).addFloatData(2).addFloatData(5).addFloatData(4).addFloatData(5)),
                ints("nodes_truenodeids", 0, 1, 3, 4), ints("nodes_trueleafs", 1, 1, 1, 1),
                ints("nodes_falsenodeids", 1, 2, 3, 5), ints("nodes_falseleafs", 0, 1, 0, 1),
                ints("nodes_missing_value_tracks_true", 0, 0, 1, 0),
                ints("leaf_targetids", 0, 0, 1, 0, 1, 1),
                tensorAttr("leaf_weights", TensorProto.newBuilder().setDataType(TensorProto.DataType.FLOAT_VALUE).addDims(6)
                        .addFloatData(10).addFloatData(20).addFloatData(30).addFloatData(100).addFloatData(200).addFloatData(300)),
                ints("tree_roots", 0, 2), intAttr("n_targets", 2), intAttr("aggregate_function", aggregate)));
    }

    private static AttributeProto tensorAttr(String name, TensorProto.Builder t) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.TENSOR).setT(t.setName(name)).build();
    }

    private static float[] run(List<AttributeProto> attrs, NDArray x) {
        NodeProto node = NodeProto.newBuilder().setOpType("TreeEnsemble").setDomain("ai.onnx.ml").setName("trees")
                .addInput("x").addOutput("y").addAllAttribute(attrs).build();
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", TensorProto.DataType.FLOAT_VALUE, x.shape()[0], x.shape()[1]))
                .addNode(node).addOutput(tensor("y", TensorProto.DataType.FLOAT_VALUE));
        ModelProto m = ModelProto.newBuilder().setIrVersion(10).setGraph(g)
                .addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(21))
                .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("ai.onnx.ml").setVersion(5)).build();
        IRModule module = OnnxImporter.importModel(m, "trees.onnx", null, ImportOptions.DEFAULT);
        return ((TensorValue) Interpreter.runMain(module, x)).data().floatData();
    }

    private static final NDArray ROWS = NDArray.fromDoubles(DType.FLOAT32, new int[] {4, 2}, new double[] {1, 5, 3, 5, Double.NaN, 7, 5, 7});

    @Test
    void sumsAndAveragesTheLeavesEachTreeReaches() {
        assertArrayEquals(new float[] {10, 300, 20, 300, 100, 30, 100, 30}, run(twoTrees(1), ROWS));
        assertArrayEquals(new float[] {5, 150, 10, 150, 50, 15, 50, 15}, run(twoTrees(0), ROWS));
    }

    @Test
    void refusesMinMaxAggregationAndBrokenTrees() {
        RuntimeException min = assertThrows(RuntimeException.class, () -> run(twoTrees(2), ROWS));
        assertTrue(min.getMessage().contains("aggregate_function 2 (MIN/MAX) is not supported"), min.getMessage());
        List<AttributeProto> bad = twoTrees(1);
        bad.set(3, ints("nodes_truenodeids", 0, 1, 3, 9));
        bad.set(4, ints("nodes_trueleafs", 1, 1, 1, 0));
        RuntimeException node = assertThrows(RuntimeException.class, () -> run(bad, ROWS));
        assertTrue(node.getMessage().contains("node 3 points to node 9 outside the 4 nodes"), node.getMessage());
        assertTrue(node.getMessage().contains("TreeEnsemble"), "the error names the node: " + node.getMessage());
        List<AttributeProto> rootless = twoTrees(1);
        rootless.removeIf(a -> a.getName().equals("tree_roots"));
        RuntimeException roots = assertThrows(RuntimeException.class, () -> run(rootless, ROWS));
        assertTrue(roots.getMessage().contains("attribute 'tree_roots' is required"), roots.getMessage());
    }

    /** One ai.onnx.ml node over x (float [2, 3] unless given) in the interpreter. */
    private static NDArray runMl(String op, NDArray x, int elemType, AttributeProto... attrs) {
        NodeProto node = NodeProto.newBuilder().setOpType(op).setDomain("ai.onnx.ml").setName("ml")
                .addInput("x").addOutput("y").addAllAttribute(List.of(attrs)).build();
        Object[] dims = java.util.Arrays.stream(x.shape()).boxed().toArray();
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", elemType, dims)).addNode(node)
                .addOutput(tensor("y", TensorProto.DataType.FLOAT_VALUE));
        ModelProto m = ModelProto.newBuilder().setIrVersion(10).setGraph(g)
                .addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(21))
                .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("ai.onnx.ml").setVersion(3)).build();
        return ((TensorValue) Interpreter.runMain(OnnxImporter.importModel(m, "ml.onnx", null, ImportOptions.DEFAULT), x)).data();
    }

    private static AttributeProto floats(String name, float... v) {
        AttributeProto.Builder b = AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.FLOATS);
        for (float f : v) b.addFloats(f);
        return b.build();
    }

    private static final int F = TensorProto.DataType.FLOAT_VALUE;
    private static final NDArray X = NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 3}, new double[] {1, -4, 2, 0, 0, 0});

    @Test
    void scalerAndNormalizerWorkPerFeatureAndPerRow() {
        assertArrayEquals(new float[] {0, -10, 2, -2, 0, -2}, runMl("Scaler", X, F, floats("offset", 1, 0, 1), floats("scale", 2, 2.5f, 2)).floatData());
        assertArrayEquals(new float[] {0.25f, -1, 0.5f, 0, 0, 0}, runMl("Normalizer", X, F, OnnxImporterTest.str("norm", "MAX")).floatData(), 1e-7f);
        assertArrayEquals(new float[] {1 / 7f, -4 / 7f, 2 / 7f, 0, 0, 0}, runMl("Normalizer", X, F, OnnxImporterTest.str("norm", "L1")).floatData(), 1e-7f);
        float l2 = (float) Math.sqrt(21);
        assertArrayEquals(new float[] {1 / l2, -4 / l2, 2 / l2, 0, 0, 0}, runMl("Normalizer", X, F, OnnxImporterTest.str("norm", "L2")).floatData(), 1e-7f);
        RuntimeException e = assertThrows(RuntimeException.class, () -> runMl("Normalizer", X, F, OnnxImporterTest.str("norm", "L3")));
        assertTrue(e.getMessage().contains("norm must be MAX, L1 or L2, got 'L3'"), e.getMessage());
    }

    @Test
    void imputerReplacesNanOrAGivenValuePerFeature() {
        NDArray holes = NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 3}, new double[] {Double.NaN, 5, 0, 7, Double.NaN, 0});
        AttributeProto imputed = floats("imputed_value_floats", 10, 20, 30);
        assertArrayEquals(new float[] {10, 5, 0, 7, 20, 0}, runMl("Imputer", holes, F, imputed, floats("replaced_value_float", Float.NaN).toBuilder()
                .setType(AttributeProto.AttributeType.FLOAT).clearFloats().setF(Float.NaN).build()).floatData());
        // the spec's default replaced value is 0: the zeros are imputed, the NaNs stay
        assertArrayEquals(new float[] {Float.NaN, 5, 30, 7, Float.NaN, 30}, runMl("Imputer", holes, F, imputed).floatData());
    }

    @Test
    void oneHotEncoderAddsACategoryAxis() {
        NDArray ids = NDArray.fromLongs(DType.INT64, new int[] {3}, new long[] {7, 3, 9});
        NDArray y = runMl("OneHotEncoder", ids, TensorProto.DataType.INT64_VALUE, ints("cats_int64s", 3, 7));
        assertArrayEquals(new int[] {3, 2}, y.shape());
        assertArrayEquals(new float[] {0, 1, 1, 0, 0, 0}, y.floatData(), "9 is no listed category: a zero row");
        RuntimeException e = assertThrows(RuntimeException.class, () -> runMl("OneHotEncoder", ids, TensorProto.DataType.INT64_VALUE,
                ints("cats_int64s", 3, 7), intAttr("zeros", 0)));
        assertTrue(e.getMessage().contains("zeros=0"), e.getMessage());
    }
}
