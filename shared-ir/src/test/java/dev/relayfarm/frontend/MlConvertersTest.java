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
}
