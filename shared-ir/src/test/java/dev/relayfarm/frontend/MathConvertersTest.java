package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Semantics of converters where ONNX and Relay differ subtly: Round, Mod, Pow dtypes, IsInf, Trilu, TopK ties. */
class MathConvertersTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;
    private static final int I32 = TensorProto.DataType.INT32_VALUE;
    private static final int I64 = TensorProto.DataType.INT64_VALUE;

    private static AttributeProto intAttr(String name, long v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT).setI(v).build();
    }

    /** Runs a one-node graph over inputs named a, b, ... with the given element types. */
    private static NDArray run(String op, int outType, List<NDArray> inputs, int[] inTypes, AttributeProto... attrs) {
        GraphProto.Builder g = GraphProto.newBuilder();
        List<String> names = new java.util.ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            String name = String.valueOf((char) ('a' + i));
            names.add(name);
            Object[] dims = java.util.Arrays.stream(inputs.get(i).shape()).boxed().toArray();
            g.addInput(tensor(name, inTypes[i], dims));
        }
        g.addNode(node(op, "n", names, List.of("y"), attrs)).addOutput(tensor("y", outType));
        IRModule m = OnnxImporter.importModel(model(18, g), "m.onnx", null, ImportOptions.DEFAULT);
        return ((TensorValue) Interpreter.runMain(m, inputs.toArray(NDArray[]::new))).data();
    }

    private static NDArray f32(double... v) {
        return NDArray.fromDoubles(DType.FLOAT32, new int[] {v.length}, v);
    }

    private static NDArray i32(long... v) {
        return NDArray.fromLongs(DType.INT32, new int[] {v.length}, v);
    }

    @Test
    void roundHalvesToEven() {
        NDArray y = run("Round", F, List.of(f32(0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 3.0, Double.POSITIVE_INFINITY, Double.NaN)), new int[] {F});
        assertArrayEquals(new float[] {0, 2, 2, 0, -2, -2, 2, -3, 3, Float.POSITIVE_INFINITY, Float.NaN}, y.floatData());
    }

    @Test
    void modFollowsTheDivisorSignUnlessFmod() {
        NDArray a = i32(-7, 7, -7, 7, -4), b = i32(3, -3, -3, 3, 2);
        assertArrayEquals(new int[] {2, -2, -1, 1, 0}, run("Mod", I32, List.of(a, b), new int[] {I32, I32}).intData());
        assertArrayEquals(new int[] {-1, 1, -1, 1, 0}, run("Mod", I32, List.of(a, b), new int[] {I32, I32}, intAttr("fmod", 1)).intData());
        NDArray y = run("Mod", F, List.of(f32(-7.5, 7.5), f32(2, -2)), new int[] {F, F}, intAttr("fmod", 1));
        assertArrayEquals(new float[] {-1.5f, 1.5f}, y.floatData());
    }

    @Test
    void powKeepsTheBaseDtype() {
        NDArray y = run("Pow", I32, List.of(i32(2, 3, -2), f32(3, 2, 3)), new int[] {I32, F});
        assertEquals(DType.INT32, y.dtype());
        assertArrayEquals(new int[] {8, 9, -8}, y.intData());
        NDArray z = run("Pow", F, List.of(f32(2, 4), NDArray.fromLongs(DType.INT64, new int[] {2}, new long[] {3, -1})), new int[] {F, I64});
        assertArrayEquals(new float[] {8, 0.25f}, z.floatData());
    }

    @Test
    void isInfDetectsEachSignSeparately() {
        NDArray x = f32(Double.NEGATIVE_INFINITY, 1, Double.POSITIVE_INFINITY, Double.NaN);
        assertArrayEquals(new byte[] {0, 0, 1, 0}, run("IsInf", TensorProto.DataType.BOOL_VALUE, List.of(x), new int[] {F},
                intAttr("detect_negative", 0)).byteData());
        assertArrayEquals(new byte[] {1, 0, 0, 0}, run("IsInf", TensorProto.DataType.BOOL_VALUE, List.of(x), new int[] {F},
                intAttr("detect_positive", 0)).byteData());
    }

    @Test
    void triluKeepsTheLowerTriangleShiftedByK() {
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", F, 3, 3))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(-1L), "k"))
                .addNode(node("Trilu", "t", List.of("x", "k"), List.of("y"), intAttr("upper", 0))).addOutput(tensor("y", F, 3, 3));
        IRModule m = OnnxImporter.importModel(model(14, g), "t.onnx", null, ImportOptions.DEFAULT);
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {3, 3}, new double[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
        NDArray y = ((TensorValue) Interpreter.runMain(m, x)).data();
        assertArrayEquals(new float[] {0, 0, 0, 4, 0, 0, 7, 8, 0}, y.floatData());
    }
}
