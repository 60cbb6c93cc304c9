package dev.relayfarm.frontend;

import static org.junit.jupiter.api.Assertions.*;

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
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OnnxImporterTest {
    static ValueInfoProto tensor(String name, int elemType, Object... dims) {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder();
        for (Object d : dims) {
            if (d instanceof String p) s.addDim(TensorShapeProto.Dimension.newBuilder().setDimParam(p));
            else s.addDim(TensorShapeProto.Dimension.newBuilder().setDimValue(((Number) d).longValue()));
        }
        return ValueInfoProto.newBuilder().setName(name)
                .setType(TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(elemType).setShape(s))).build();
    }

    static ModelProto model(long opset, GraphProto.Builder g) {
        return ModelProto.newBuilder().setIrVersion(8).addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(opset)).setGraph(g).build();
    }

    static NodeProto node(String op, String name, List<String> in, List<String> out, AttributeProto... attrs) {
        return NodeProto.newBuilder().setOpType(op).setName(name).addAllInput(in).addAllOutput(out).addAllAttribute(List.of(attrs)).build();
    }

    static AttributeProto ints(String name, long... v) {
        AttributeProto.Builder b = AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INTS);
        for (long x : v) b.addInts(x);
        return b.build();
    }

    private static final int F = TensorProto.DataType.FLOAT_VALUE;
    private static final int I64 = TensorProto.DataType.INT64_VALUE;

    static AttributeProto str(String name, String v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.STRING)
                .setS(com.google.protobuf.ByteString.copyFromUtf8(v)).build();
    }

    static AttributeProto intAttr(String name, long v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT).setI(v).build();
    }

    /** Imports a one-node graph over inputs named a, b, ... (float unless int64 data) and runs it in the interpreter. */
    static NDArray runOneNode(String op, long opset, List<NDArray> inputs, AttributeProto... attrs) {
        GraphProto.Builder g = GraphProto.newBuilder();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            String name = String.valueOf((char) ('a' + i));
            names.add(name);
            Object[] dims = Arrays.stream(inputs.get(i).shape()).boxed().toArray();
            g.addInput(tensor(name, inputs.get(i).dtype().equals(DType.INT64) ? I64 : F, dims));
        }
        g.addNode(node(op, "n", names, List.of("y"), attrs)).addOutput(tensor("y", F));
        IRModule m = OnnxImporter.importModel(model(opset, g), "m.onnx", null, ImportOptions.DEFAULT);
        return ((TensorValue) Interpreter.runMain(m, inputs.toArray(NDArray[]::new))).data();
    }

    static NDArray f32(int[] shape, double... v) {
        return NDArray.fromDoubles(DType.FLOAT32, shape, v);
    }

    static NDArray i64(int[] shape, long... v) {
        return NDArray.fromLongs(DType.INT64, shape, v);
    }

    /** x[1,4] -> Gemm(W[3,4], transB=1) -> Relu -> Reshape(shape computed by Shape+Concat) */
    private static ModelProto gemmRelu() {
        NDArray w = NDArray.fromDoubles(DType.FLOAT32, new int[] {3, 4}, new double[] {1, 0, 0, 0, 0, 1, 0, 0, -1, -1, -1, -1});
        GraphProto.Builder g = GraphProto.newBuilder().setName("g")
                .addInput(tensor("x", F, 1, 4))
                .addInitializer(OnnxTensors.fromNDArray(w, "W"))
                .addNode(node("Gemm", "fc", List.of("x", "W"), List.of("h"),
                        AttributeProto.newBuilder().setName("transB").setType(AttributeProto.AttributeType.INT).setI(1).build()))
                .addNode(node("Relu", "act", List.of("h"), List.of("r")))
                .addNode(node("Shape", "shape", List.of("r"), List.of("s")))
                .addNode(node("Reshape", "flat", List.of("r", "s"), List.of("y")))
                .addOutput(tensor("y", F, 1, 3));
        return model(13, g);
    }

    @Test
    void importsTypesAndRunsASmallGraph() {
        IRModule m = OnnxImporter.importModel(gemmRelu(), "tiny.onnx", null, ImportOptions.DEFAULT);
        Function main = m.main().orElseThrow();
        assertEquals(TensorType.of(DType.FLOAT32, 1, 4), main.params().getFirst().annotation());
        // Shape of a static tensor folds to a constant, so Reshape gets a constant shape.
        assertTrue(ExprTraversal.postOrder(main).stream().noneMatch(e -> e.toString().contains("shape_of")));
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 4}, new double[] {1, 2, 3, 4});
        NDArray y = ((TensorValue) Interpreter.runMain(m, x)).data();
        assertArrayEquals(new float[] {1, 2, 0}, y.floatData());
    }

    @Test
    void dynamicDimsBecomeAnyUnlessBound() {
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", F, "N", 4))
                .addNode(node("Relu", "act", List.of("x"), List.of("y"))).addOutput(tensor("y", F, "N", 4));
        IRModule dyn = OnnxImporter.importModel(model(13, g), "d.onnx", null, ImportOptions.DEFAULT);
        assertEquals(List.of(Dim.ANY, Dim.of(4)), ((TensorType) dyn.main().orElseThrow().params().getFirst().annotation()).shape());
        IRModule bound = OnnxImporter.importModel(model(13, g), "d.onnx", null, ImportOptions.DEFAULT.withInputShapes(Map.of("x", List.of(2L, 4L))));
        assertEquals(TensorType.of(DType.FLOAT32, 2, 4), bound.main().orElseThrow().params().getFirst().annotation());
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> OnnxImporter.importModel(model(13, g), "d.onnx", null,
                ImportOptions.DEFAULT.withInputShapes(Map.of("x", List.of(2L, 5L)))));
        assertEquals("d.onnx: the shape given for x sets dim 1 to 5 but the model fixes it to 4", e.getMessage());
    }

    @Test
    void unsupportedOperatorNamesNodeOpOpsetAndFile() {
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", F, 2))
                .addNode(node("Frobnicate", "weird_1", List.of("x"), List.of("y"))).addOutput(tensor("y", F, 2));
        UnsupportedOpException e = assertThrows(UnsupportedOpException.class, () -> OnnxImporter.importModel(model(17, g), "net.onnx", null, ImportOptions.DEFAULT));
        assertEquals("net.onnx: node 'weird_1' (Frobnicate, opset 17): operator Frobnicate is not supported", e.getMessage());
        assertEquals("Frobnicate", e.what());
    }

    @Test
    void unknownAttributeIsAnErrorNotSilentlyIgnored() {
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", F, 2))
                .addNode(node("Relu", "act", List.of("x"), List.of("y"), ints("mystery", 1))).addOutput(tensor("y", F, 2));
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> OnnxImporter.importModel(model(13, g), "net.onnx", null, ImportOptions.DEFAULT));
        assertEquals("net.onnx: node 'act' (Relu, opset 13): attribute 'mystery' is not supported", e.getMessage());
    }

    @Test
    void typeErrorsAreReportedAtTheNode() {
        NDArray w = NDArray.zeros(DType.FLOAT32, 3, 5);
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", F, 1, 4)).addInitializer(OnnxTensors.fromNDArray(w, "W"))
                .addNode(node("Gemm", "fc", List.of("x", "W"), List.of("y"),
                        AttributeProto.newBuilder().setName("transB").setType(AttributeProto.AttributeType.INT).setI(1).build()))
                .addOutput(tensor("y", F, 1, 3));
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> OnnxImporter.importModel(model(13, g), "net.onnx", null, ImportOptions.DEFAULT));
        assertTrue(e.getMessage().startsWith("net.onnx: node 'fc' (Gemm, opset 13): nn.dense"), e.getMessage());
    }

    @Test
    void constantSubgraphsFold() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addNode(node("Constant", "c", List.of(), List.of("a"), AttributeProto.newBuilder().setName("value")
                        .setType(AttributeProto.AttributeType.TENSOR)
                        .setT(OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[] {2}, new double[] {1, 2}), "a")).build()))
                .addNode(node("Add", "twice", List.of("a", "a"), List.of("y")))
                .addOutput(tensor("y", F, 2));
        IRModule m = OnnxImporter.importModel(model(13, g), "c.onnx", null, ImportOptions.DEFAULT);
        Constant c = assertInstanceOf(Constant.class, m.main().orElseThrow().body());
        assertArrayEquals(new float[] {2, 4}, c.data().floatData());
    }

    /** NLL with class weights and an ignored target: mean divides by the weights of the targets kept. */
    @Test
    void nllLossIgnoresTargetsAndWeighsTheMean() {
        int i64 = TensorProto.DataType.INT64_VALUE;
        NDArray w = NDArray.fromDoubles(DType.FLOAT32, new int[] {3}, new double[] {1, 2, 4});
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", F, 3, 3)).addInput(tensor("t", i64, 3))
                .addInitializer(OnnxTensors.fromNDArray(w, "w"))
                .addNode(node("NegativeLogLikelihoodLoss", "nll", List.of("x", "t", "w"), List.of("y"),
                        AttributeProto.newBuilder().setName("ignore_index").setType(AttributeProto.AttributeType.INT).setI(-1).build()))
                .addOutput(tensor("y", F));
        IRModule m = OnnxImporter.importModel(model(13, g), "nll.onnx", null, ImportOptions.DEFAULT);
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {3, 3}, new double[] {-1, -2, -3, -4, -5, -6, -7, -8, -9});
        NDArray t = NDArray.fromLongs(DType.INT64, new int[] {3}, new long[] {2, -1, 1});
        NDArray y = ((TensorValue) Interpreter.runMain(m, x, t)).data();
        // rows 0 and 2 count: (3 * 4 + 8 * 2) / (4 + 2); row 1 is ignored (its target -1 is not even a class)
        assertEquals(28.0 / 6, y.getDouble(0), 1e-6);
    }
}
