package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.ints;
import static dev.relayfarm.frontend.OnnxImporterTest.intAttr;
import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Shape values ({@link ShapeValues}): vectors computed from {@code Shape} of tensors with {@code ?} dims, evaluated at
 * import time, so Reshape keeps the {@code ?} as {@code 0} or {@code -1} and fully known ones become constants. Each
 * case imports a hand-built ONNX graph and compares the printed Relay of {@code @main}, then checks full type
 * inference and, where it runs, the interpreter.
 */
class ShapeValuesImportTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;
    private static final int I64 = TensorProto.DataType.INT64_VALUE;
    private static final int I32 = TensorProto.DataType.INT32_VALUE;

    private static TensorProto longs(String name, long... v) {
        return OnnxTensors.fromNDArray(NDArray.fromLongs(DType.INT64, new int[] {v.length}, v), name);
    }

    private static IRModule load(GraphProto.Builder g) {
        return OnnxImporter.importModel(model(13, g), "shapes.onnx", null, ImportOptions.DEFAULT);
    }

    private static String mainType(IRModule m) {
        return RelayPrinter.print(TypeInference.infer(m).typeOf(new GlobalVar("main")));
    }

    private static void assertText(String expected, IRModule m) {
        String actual = RelayPrinter.print(m).strip();
        assertEquals(expected.strip(), actual, "Actual:\n" + actual + "\nExpected:\n" + expected);
    }

    /**
     * PaddleOCR's {@code Reshape(t, Concat(Slice(Shape(u), 0, 2), [-1]))} with u's last dim {@code ?}: the slice is
     * known ({@code [1, 120]}), so the target is {@code [1, 120, -1]} and the result {@code [1, 120, ?]}.
     */
    @Test
    void aSlicedShapeWithTheUnknownLeftOutIsAStaticTarget() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("u", F, 1, 120, "W"))
                .addInitializer(longs("zero", 0)).addInitializer(longs("two", 2)).addInitializer(longs("minus1", -1))
                .addNode(node("Transpose", "t", List.of("u"), List.of("t"), ints("perm", 0, 2, 1)))
                .addNode(node("Shape", "shape", List.of("u"), List.of("s")))
                .addNode(node("Slice", "head", List.of("s", "zero", "two"), List.of("h")))
                .addNode(node("Concat", "target", List.of("h", "minus1"), List.of("c"), intAttr("axis", 0)))
                .addNode(node("Reshape", "r", List.of("t", "c"), List.of("y")))
                .addOutput(tensor("y", F, 1, 120, "W"));
        IRModule m = load(g);
        assertText("""
                #[version = "0.0.5"]
                def @main(%u: Tensor[(1, 120, ?), float32]) {
                  %0 = transpose(%u, axes=[0, 2, 1]);
                  reshape(%0, newshape=[1, 120, -1], allowzero=False)
                }
                """, m);
        assertEquals("fn (Tensor[(1, 120, ?), float32]) -> Tensor[(1, 120, ?), float32]", mainType(m));
        // at width 2: [[[0, 1], [2, 3], ...]] transposed and reinterpreted as [1, 120, 2]
        double[] v = new double[240];
        for (int i = 0; i < v.length; i++) v[i] = i;
        NDArray u = NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 120, 2}, v);
        NDArray y = ((TensorValue) Interpreter.runMain(m, u)).data();
        assertArrayEquals(new int[] {1, 120, 2}, y.shape());
        assertEquals(0f, y.floatData()[0]);
        assertEquals(2f, y.floatData()[1], "row-major read of the transposed [1, 2, 120]: u[0][1][0]");
        assertEquals(1f, y.floatData()[120]);
    }

    /**
     * Paddle's multi-head split {@code Reshape(x, Concat(Cast([0]), Cast(Slice(Cast(Shape(x)), 1, 2)), [3, 8, 15]))}:
     * the {@code ?} element is x's own dim 1, read through int32 casts, at position 1: a copy ({@code 0}), which keeps
     * the result's {@code ?} the input's and leaves no dim to infer.
     */
    @Test
    void anUnknownThatIsTheInputsOwnDimCopiesIt() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("x", F, 1, "N", 360))
                .addInitializer(longs("zero", 0)).addInitializer(longs("one", 1)).addInitializer(longs("two", 2))
                .addInitializer(longs("heads", 3, 8, 15))
                .addNode(node("Shape", "shape", List.of("x"), List.of("s")))
                .addNode(node("Cast", "to32", List.of("s"), List.of("s32"), intAttr("to", I32)))
                .addNode(node("Slice", "n", List.of("s32", "one", "two"), List.of("n32")))
                .addNode(node("Cast", "to64", List.of("n32"), List.of("n"), intAttr("to", I64)))
                .addNode(node("Concat", "target", List.of("zero", "n", "heads"), List.of("c"), intAttr("axis", 0)))
                .addNode(node("Reshape", "r", List.of("x", "c"), List.of("y")))
                .addOutput(tensor("y", F, 1, "N", 3, 8, 15));
        IRModule m = load(g);
        assertText("""
                #[version = "0.0.5"]
                def @main(%x: Tensor[(1, ?, 360), float32]) {
                  reshape(%x, newshape=[0, 0, 3, 8, 15], allowzero=False)
                }
                """, m);
        assertEquals("fn (Tensor[(1, ?, 360), float32]) -> Tensor[(1, ?, 3, 8, 15), float32]", mainType(m));
        NDArray x = NDArray.zeros(DType.FLOAT32, 1, 4, 360);
        assertArrayEquals(new int[] {1, 4, 3, 8, 15}, ((TensorValue) Interpreter.runMain(m, x)).data().shape());
    }

    /**
     * Arithmetic on a {@code ?} is a new unknown: {@code [Shape(x)[0], Shape(x)[2] * 2]} of a transposed x is
     * {@code [1, ?]} with the {@code ?} not the input's dim, so it is the one {@code -1}.
     */
    @Test
    void arithmeticOnAnUnknownDimIsTheInferredDim() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("x", F, 1, 4, "W"))
                .addInitializer(longs("zero", 0)).addInitializer(longs("two", 2))
                .addNode(node("Shape", "shape", List.of("x"), List.of("s")))
                .addNode(node("Gather", "batch", List.of("s", "zero"), List.of("b")))
                .addNode(node("Gather", "width", List.of("s", "two"), List.of("w")))
                .addNode(node("Mul", "double", List.of("w", "two"), List.of("w2")))
                .addNode(node("Concat", "target", List.of("b", "w2"), List.of("c"), intAttr("axis", 0)))
                .addNode(node("Reshape", "r", List.of("x", "c"), List.of("y")))
                .addOutput(tensor("y", F, 1, "M"));
        IRModule m = load(g);
        assertText("""
                #[version = "0.0.5"]
                def @main(%x: Tensor[(1, 4, ?), float32]) {
                  reshape(%x, newshape=[1, -1], allowzero=False)
                }
                """, m);
        assertEquals("fn (Tensor[(1, 4, ?), float32]) -> Tensor[(1, ?), float32]", mainType(m));
    }

    /**
     * Gather with a negative index, Squeeze and Unsqueeze move the {@code ?} without losing where it came from:
     * {@code [Unsqueeze(Squeeze(Shape(x)[0:1])), Unsqueeze(Shape(x)[-1] * Shape(x)[1])]} of {@code x: [?, 4, 5]} is
     * {@code [x's dim 0, 20]}, so a copy and a constant.
     */
    @Test
    void gatherSqueezeAndUnsqueezeKeepTheDimsOrigin() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("x", F, "N", 4, 5))
                .addInitializer(longs("zero", 0)).addInitializer(longs("one", 1))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(-1L), "last"))
                .addInitializer(OnnxTensors.fromNDArray(NDArray.scalar(1L), "second"))
                .addNode(node("Shape", "shape", List.of("x"), List.of("s")))
                .addNode(node("Slice", "first", List.of("s", "zero", "one"), List.of("n1")))
                .addNode(node("Squeeze", "n", List.of("n1", "zero"), List.of("n")))
                .addNode(node("Unsqueeze", "nv", List.of("n", "zero"), List.of("nv")))
                .addNode(node("Gather", "w", List.of("s", "last"), List.of("w")))
                .addNode(node("Gather", "c", List.of("s", "second"), List.of("c")))
                .addNode(node("Mul", "wc", List.of("w", "c"), List.of("wc")))
                .addNode(node("Unsqueeze", "wcv", List.of("wc", "zero"), List.of("wcv")))
                .addNode(node("Concat", "target", List.of("nv", "wcv"), List.of("t"), intAttr("axis", 0)))
                .addNode(node("Reshape", "r", List.of("x", "t"), List.of("y")))
                .addOutput(tensor("y", F, "N", 20));
        IRModule m = load(g);
        assertText("""
                #[version = "0.0.5"]
                def @main(%x: Tensor[(?, 4, 5), float32]) {
                  reshape(%x, newshape=[0, 20], allowzero=False)
                }
                """, m);
        assertEquals("fn (Tensor[(?, 4, 5), float32]) -> Tensor[(?, 20), float32]", mainType(m));
    }

    /** A shape computation that does not depend on the {@code ?} is a constant: ConstantOfShape of {@code Shape(x)[0:2] * 2}. */
    @Test
    void aFullyKnownShapeValueIsAConstant() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("x", F, 1, 3, "W"))
                .addInitializer(longs("zero", 0)).addInitializer(longs("two", 2))
                .addNode(node("Shape", "shape", List.of("x"), List.of("s")))
                .addNode(node("Slice", "head", List.of("s", "zero", "two"), List.of("h")))
                .addNode(node("Mul", "double", List.of("h", "two"), List.of("d")))
                .addNode(node("ConstantOfShape", "zeros", List.of("d"), List.of("z")))
                .addNode(node("ReduceSum", "sum", List.of("x"), List.of("y"), intAttr("keepdims", 0)))
                .addOutput(tensor("z", F, 2, 6)).addOutput(tensor("y", F));
        IRModule m = load(g);
        assertEquals("fn (Tensor[(1, 3, ?), float32]) -> (Tensor[(2, 6), float32], float32)", mainType(m));
    }

    /** Two dims known only at run time, neither the input's at its position: a reshape can infer only one. */
    @Test
    void twoUnknownsThatAreNotCopiesAreAnErrorNamingTheNode() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("x", F, 1, "H", "W"))
                .addNode(node("Transpose", "t", List.of("x"), List.of("t"), ints("perm", 0, 2, 1)))
                .addNode(node("Shape", "shape", List.of("x"), List.of("s")))
                .addNode(node("Reshape", "back", List.of("t", "s"), List.of("y")))
                .addOutput(tensor("y", F, 1, "H", "W"));
        NeedsConstantException e = assertThrows(NeedsConstantException.class, () -> load(g));
        assertEquals("shapes.onnx: node 'back' (Reshape, opset 13): shape (input 1) is [1, ?, ?], more than one dim known only at run time;"
                + " a reshape can infer only one (-1), the others must be constants or the input's dims at the same position", e.getMessage());
        assertEquals("s", e.value());
        assertEquals(List.of("x"), e.graphInputs());
        // the same shape of the tensor itself copies both dims: no error
        GraphProto.Builder same = g.clone().clearNode().clearOutput()
                .addNode(node("Shape", "shape", List.of("x"), List.of("s")))
                .addNode(node("Reshape", "same", List.of("x", "s"), List.of("y")))
                .addOutput(tensor("y", F, 1, "H", "W"));
        assertText("""
                #[version = "0.0.5"]
                def @main(%x: Tensor[(1, ?, ?), float32]) {
                  reshape(%x, newshape=[1, 0, 0], allowzero=False)
                }
                """, load(same));
    }

    /** {@code ?} in a binding keeps that dim as the model declares it: dynamic stays {@code Any}, a fixed size stays. */
    @Test
    void aQuestionMarkInABindingKeepsTheDeclaredDim() {
        GraphProto.Builder g = GraphProto.newBuilder().addInput(tensor("x", F, "N", 3, "H", "W"))
                .addNode(node("Relu", "act", List.of("x"), List.of("y"))).addOutput(tensor("y", F, "N", 3, "H", "W"));
        long any = ImportOptions.ANY_DIM;
        IRModule m = OnnxImporter.importModel(model(13, g), "d.onnx", null, ImportOptions.DEFAULT.withInputShapes(Map.of("x", List.of(1L, any, 48L, any))));
        assertEquals("fn (Tensor[(1, 3, 48, ?), float32]) -> Tensor[(1, 3, 48, ?), float32]", mainType(m));
    }
}
