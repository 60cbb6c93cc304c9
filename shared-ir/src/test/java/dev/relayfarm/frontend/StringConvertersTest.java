package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.intAttr;
import static dev.relayfarm.frontend.OnnxImporterTest.ints;
import static dev.relayfarm.frontend.OnnxImporterTest.str;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.*;

import com.google.protobuf.ByteString;
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
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ONNX string operators and ai.onnx.ml LabelEncoder beyond the node suite: LabelEncoder's opset 1 (classes_strings)
 * and opset 2 (key and value lists, both directions, float keys), StringSplit on whitespace with maxsplit,
 * StringNormalizer ignoring case, and string_data decoding.
 */
class StringConvertersTest {
    private static List<NDArray> run(String domain, long opset, String op, NDArray x, int outputs, AttributeProto... attrs) {
        NodeProto.Builder node = NodeProto.newBuilder().setOpType(op).setDomain(domain).setName("n").addInput("x").addAllAttribute(List.of(attrs));
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", OnnxDTypes.toOnnx(x.dtype()), java.util.Arrays.stream(x.shape()).boxed().toArray()));
        for (int i = 0; i < outputs; i++) {
            node.addOutput("y" + i);
            g.addOutput(tensor("y" + i, TensorProto.DataType.UNDEFINED_VALUE));
        }
        ModelProto.Builder m = ModelProto.newBuilder().setIrVersion(10).setGraph(g.addNode(node))
                .addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(21));
        if (!domain.isEmpty()) m.addOpsetImport(OperatorSetIdProto.newBuilder().setDomain(domain).setVersion(opset));
        IRModule module = OnnxImporter.importModel(m.build(), "m.onnx", null, ImportOptions.DEFAULT);
        Value v = Interpreter.runMain(module, x);
        return v instanceof TupleValue t ? t.fields().stream().map(f -> ((TensorValue) f).data()).toList() : List.of(((TensorValue) v).data());
    }

    private static AttributeProto strs(String name, String... v) {
        AttributeProto.Builder b = AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.STRINGS);
        for (String s : v) b.addStrings(ByteString.copyFromUtf8(s));
        return b.build();
    }

    private static AttributeProto floats(String name, float... v) {
        AttributeProto.Builder b = AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.FLOATS);
        for (float f : v) b.addFloats(f);
        return b.build();
    }

    private static NDArray strings(int[] shape, String... v) {
        return NDArray.ofStrings(shape, v);
    }

    @Test
    void labelEncoderOpset1MapsClassNamesToIndicesAndBack() {
        NDArray idx = run("ai.onnx.ml", 1, "LabelEncoder", strings(new int[] {3}, "b", "z", "a"), 1, strs("classes_strings", "a", "b"), intAttr("default_int64", 9)).getFirst();
        assertArrayEquals(new long[] {1, 9, 0}, idx.longData());
        NDArray names = run("ai.onnx.ml", 1, "LabelEncoder", NDArray.wrap(DType.INT64, new int[] {3}, new long[] {1, 7, 0}), 1, strs("classes_strings", "a", "b")).getFirst();
        assertArrayEquals(new String[] {"b", "_Unused", "a"}, names.stringData());
    }

    @Test
    void labelEncoderOpset2ListsInEveryDirection() {
        NDArray f = run("ai.onnx.ml", 2, "LabelEncoder", strings(new int[] {2}, "ü", "x"), 1, strs("keys_strings", "ü"), floats("values_floats", 2.5f)).getFirst();
        assertArrayEquals(new float[] {2.5f, -0.0f}, f.floatData()); // default_float is -0.0
        NDArray s = run("ai.onnx.ml", 2, "LabelEncoder", NDArray.wrap(DType.FLOAT32, new int[] {2}, new float[] {1f, 3f}), 1,
                floats("keys_floats", 1f, 2f), strs("values_strings", "one", "two"), str("default_string", "?")).getFirst();
        assertArrayEquals(new String[] {"one", "?"}, s.stringData());
        RuntimeException both = assertThrows(RuntimeException.class, () -> run("ai.onnx.ml", 2, "LabelEncoder", strings(new int[] {1}, "a"), 1,
                strs("keys_strings", "a"), ints("values_int64s", 1), floats("values_floats", 1f)));
        assertTrue(both.getMessage().contains("more than one values_* attribute"), both.getMessage());
        RuntimeException wrongKeys = assertThrows(RuntimeException.class, () -> run("ai.onnx.ml", 2, "LabelEncoder", strings(new int[] {1}, "a"), 1,
                ints("keys_int64s", 1), ints("values_int64s", 1)));
        assertTrue(wrongKeys.getMessage().contains("the keys are int64 but the input is string"), wrongKeys.getMessage());
    }

    @Test
    void stringSplitOnWhitespaceWithMaxsplit() {
        List<NDArray> out = run("", 0, "StringSplit", strings(new int[] {2}, " a  b c", ""), 2, intAttr("maxsplit", 1));
        assertArrayEquals(new int[] {2, 2}, out.get(0).shape());
        assertArrayEquals(new String[] {"a", "b c", "", ""}, out.get(0).stringData());
        assertArrayEquals(new long[] {2, 0}, out.get(1).longData());
    }

    @Test
    void stringNormalizerIgnoresCaseForStopwordsByDefault() {
        NDArray y = run("", 0, "StringNormalizer", strings(new int[] {3}, "The", "cat", "THE"), 1, strs("stopwords", "the"), str("case_change_action", "LOWER")).getFirst();
        assertArrayEquals(new String[] {"cat"}, y.stringData());
        RuntimeException bad = assertThrows(RuntimeException.class, () -> run("", 0, "StringNormalizer", strings(new int[] {1}, "a"), 1, str("case_change_action", "TITLE")));
        assertTrue(bad.getMessage().contains("case_change_action must be NONE, LOWER or UPPER"), bad.getMessage());
    }

    @Test
    void stringDataDecodesAsUtf8AndRoundTrips() {
        TensorProto t = TensorProto.newBuilder().setDataType(TensorProto.DataType.STRING_VALUE).addDims(2)
                .addStringData(ByteString.copyFromUtf8("naïve")).addStringData(ByteString.EMPTY).build();
        NDArray a = OnnxTensors.toNDArray(t, null, "t");
        assertArrayEquals(new String[] {"naïve", ""}, a.stringData());
        assertTrue(OnnxTensors.toNDArray(OnnxTensors.fromNDArray(a, "a"), null, "a").contentEquals(a));
        TensorProto shortT = t.toBuilder().clearDims().addDims(3).build();
        RuntimeException e = assertThrows(OnnxFormatException.class, () -> OnnxTensors.toNDArray(shortT, null, "t"));
        assertTrue(e.getMessage().contains("needs 3 strings, the tensor holds 2"), e.getMessage());
    }
}
