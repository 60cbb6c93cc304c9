package dev.relayfarm.quantize.qdq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
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
import dev.relayfarm.ir.NDArray;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Moving a graph to opset 13 keeps its meaning: checked by running both graphs through our importer. */
class OpsetUpgradeTest {
    private static NodeProto softmax(long axis) {
        return NodeProto.newBuilder().setOpType("Softmax").setName("sm").addInput("x").addOutput("y")
                .addAttribute(AttributeProto.newBuilder().setName("axis").setType(AttributeProto.AttributeType.INT).setI(axis)).build();
    }

    private static ModelProto model(long opset, List<NodeProto> nodes) {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder();
        for (long d : new long[] {2, 3, 4}) s.addDim(TensorShapeProto.Dimension.newBuilder().setDimValue(d));
        ValueInfoProto x = ValueInfoProto.newBuilder().setName("x")
                .setType(TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(TensorProto.DataType.FLOAT_VALUE).setShape(s))).build();
        GraphProto g = GraphProto.newBuilder().setName("g").addInput(x).addOutput(ValueInfoProto.newBuilder().setName("y")).addAllNode(nodes).build();
        return ModelProto.newBuilder().setIrVersion(7).addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(opset)).setGraph(g).build();
    }

    private static NDArray run(ModelProto m, NDArray x) {
        return ((TensorValue) Interpreter.runMain(OnnxImporter.importModel(m, "m.onnx", null, ImportOptions.DEFAULT), x)).data();
    }

    @Test
    void aPre13SoftmaxKeepsNormalizingOverTheFlattenedTail() {
        Random r = new Random(3);
        float[] v = new float[24];
        for (int i = 0; i < v.length; i++) v[i] = 3 * r.nextFloat();
        NDArray x = NDArray.wrap(DType.FLOAT32, new int[] {2, 3, 4}, v);
        ModelProto old = model(11, List.of(softmax(1)));
        List<NodeProto> upgraded = OpsetUpgrade.upgrade(old.getGraph().getNodeList(), 11);
        assertEquals(List.of("Flatten", "Softmax", "Shape", "Reshape"), upgraded.stream().map(NodeProto::getOpType).toList());
        NDArray want = run(old, x), got = run(model(13, upgraded), x);
        // opset 11 normalizes each row over its 3 x 4 tail: a row sums to 1 (opset 13's own Softmax(axis=1) would not)
        double row = 0;
        for (int i = 0; i < 12; i++) row += got.getDouble(i);
        assertEquals(1.0, row, 1e-5);
        for (int i = 0; i < 24; i++) assertEquals(want.getDouble(i), got.getDouble(i), 1e-6, "element " + i);
        // and the unconverted node at opset 13 would compute something else, so the rewrite is needed
        NDArray naive = run(model(13, List.of(softmax(1))), x);
        double diff = 0;
        for (int i = 0; i < 24; i++) diff = Math.max(diff, Math.abs(naive.getDouble(i) - want.getDouble(i)));
        assertTrue(diff > 1e-3, "Softmax(axis=1) should differ between opset 11 and 13 on a rank-3 input");
    }

    @Test
    void anOperatorWhoseAttributesBecameInputsIsRefusedByName() {
        NodeProto squeeze = NodeProto.newBuilder().setOpType("Squeeze").setName("sq").addInput("x").addOutput("y")
                .addAttribute(AttributeProto.newBuilder().setName("axes").setType(AttributeProto.AttributeType.INTS).addInts(0)).build();
        QdqExportException e = assertThrows(QdqExportException.class, () -> OpsetUpgrade.upgrade(List.of(squeeze), 11));
        assertTrue(e.getMessage().contains("'sq' (Squeeze)") && e.getMessage().contains("13"), e.getMessage());
        // at opset 13 already, nothing changes
        assertEquals(List.of(squeeze), OpsetUpgrade.upgrade(List.of(squeeze), 13));
    }
}
