package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.model;
import static dev.relayfarm.frontend.OnnxImporterTest.node;
import static dev.relayfarm.frontend.OnnxImporterTest.tensor;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Graph inputs that an operator needs as constants (axes, shapes) and binding them with ImportOptions.frozenInputs. */
class FrozenInputsTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;
    private static final int I64 = TensorProto.DataType.INT64_VALUE;

    /** y = ReduceSum(x, Neg(axes), keepdims=0): the axes are computed from a graph input. */
    private static ModelProto reduceOverFedAxes() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("x", F, 2, 3))
                .addInput(tensor("axes", I64, 1))
                .addNode(node("Neg", "neg", List.of("axes"), List.of("negated")))
                .addNode(node("ReduceSum", "sum", List.of("x", "negated"), List.of("y"),
                        dev.relayfarm.frontend.proto.Onnx.AttributeProto.newBuilder().setName("keepdims")
                                .setType(dev.relayfarm.frontend.proto.Onnx.AttributeProto.AttributeType.INT).setI(0).build()))
                .addOutput(tensor("y", F, 2));
        return model(13, g);
    }

    private static final NDArray X = NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 3}, new double[] {1, 2, 3, 10, 20, 30});

    @Test
    void needsConstantNamesTheValueAndTheGraphInputsItComesFrom() {
        NeedsConstantException e = assertThrows(NeedsConstantException.class,
                () -> OnnxImporter.importModel(reduceOverFedAxes(), "r.onnx", null, ImportOptions.DEFAULT));
        assertEquals("negated", e.value());
        assertEquals(List.of("axes"), e.graphInputs());
        assertEquals("r.onnx: node 'sum' (ReduceSum, opset 13): axes (input 1) must be a constant; computed axes values are not supported", e.getMessage());
    }

    @Test
    void frozenInputBecomesAConstantAndLeavesTheParameters() {
        NDArray axes = NDArray.fromLongs(DType.INT64, new int[] {1}, new long[] {-1}); // Neg(-1) = 1: sum over columns
        IRModule m = OnnxImporter.importModel(reduceOverFedAxes(), "r.onnx", null, ImportOptions.DEFAULT.withFrozenInputs(Map.of("axes", axes)));
        assertEquals(1, m.main().orElseThrow().params().size());
        NDArray y = ((TensorValue) Interpreter.runMain(m, X)).data();
        assertArrayEquals(new float[] {6, 60}, y.floatData());
    }

    @Test
    void frozenValueMustFitTheDeclaredInput() {
        NDArray wrongType = NDArray.fromLongs(DType.INT32, new int[] {1}, new long[] {1});
        OnnxFormatException e = assertThrows(OnnxFormatException.class, () -> OnnxImporter.importModel(reduceOverFedAxes(), "r.onnx", null,
                ImportOptions.DEFAULT.withFrozenInputs(Map.of("axes", wrongType))));
        assertEquals("r.onnx: frozen input 'axes' is Tensor[(1), int32] but the input is declared Tensor[(1), int64]", e.getMessage());
        OnnxFormatException unknown = assertThrows(OnnxFormatException.class, () -> OnnxImporter.importModel(reduceOverFedAxes(), "r.onnx", null,
                ImportOptions.DEFAULT.withFrozenInputs(Map.of("nope", wrongType))));
        assertEquals("r.onnx: frozen input 'nope' is not a graph input", unknown.getMessage());
    }

    private static void write(Path file, com.google.protobuf.Message m) throws IOException {
        Files.createDirectories(file.getParent());
        Files.write(file, m.toByteArray());
    }

    @Test
    void checkFreezesIntegerInputsPerDataSet(@TempDir Path dir) throws IOException {
        write(dir.resolve("model.onnx"), reduceOverFedAxes());
        // Two data sets with different axes: each must be imported with its own frozen values.
        long[][] axes = {{-1}, {0}};
        double[][] sums = {{6, 60}, {11, 22, 33}};
        for (int k = 0; k < 2; k++) {
            Path set = dir.resolve("test_data_set_" + k);
            write(set.resolve("input_0.pb"), OnnxTensors.fromNDArray(X, "x"));
            write(set.resolve("input_1.pb"), OnnxTensors.fromNDArray(NDArray.fromLongs(DType.INT64, new int[] {1}, axes[k]), "axes"));
            int n = sums[k].length;
            write(set.resolve("output_0.pb"), OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[] {n}, sums[k]), "y"));
        }
        // The declared output shape (2) does not hold for the second set; the check compares values only.
        OnnxCheck.Result r = OnnxCheck.check(dir, OnnxCheck.Options.DEFAULT);
        assertEquals(OnnxCheck.Status.PASS, r.status(), r.line());

        // Wrong expected numbers in one set are still reported as a failure.
        write(dir.resolve("test_data_set_1/output_0.pb"),
                OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[] {3}, new double[] {11, 22, 34}), "y"));
        OnnxCheck.Result bad = OnnxCheck.check(dir, OnnxCheck.Options.DEFAULT);
        assertEquals(OnnxCheck.Status.FAIL, bad.status(), bad.line());
    }

    @Test
    void floatInputsAreNeverFrozen(@TempDir Path dir) throws IOException {
        // Reshape whose shape is computed from a float input (cast to int64): nothing freezable, so an import error.
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInput(tensor("x", F, 2, 3))
                .addInput(tensor("s", F, 2))
                .addNode(node("Cast", "c", List.of("s"), List.of("shape"),
                        dev.relayfarm.frontend.proto.Onnx.AttributeProto.newBuilder().setName("to")
                                .setType(dev.relayfarm.frontend.proto.Onnx.AttributeProto.AttributeType.INT).setI(I64).build()))
                .addNode(node("Reshape", "r", List.of("x", "shape"), List.of("y")))
                .addOutput(tensor("y", F, 3, 2));
        write(dir.resolve("model.onnx"), model(13, g));
        Path set = dir.resolve("test_data_set_0");
        write(set.resolve("input_0.pb"), OnnxTensors.fromNDArray(X, "x"));
        write(set.resolve("input_1.pb"), OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[] {2}, new double[] {3, 2}), "s"));
        write(set.resolve("output_0.pb"), OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[] {3, 2}, new double[] {1, 2, 3, 10, 20, 30}), "y"));
        OnnxCheck.Result r = OnnxCheck.check(dir, OnnxCheck.Options.DEFAULT);
        assertEquals(OnnxCheck.Status.ERROR, r.status(), r.line());
        assertTrue(r.reason().contains("shape (input 1) must be a constant"), r.reason());
    }
}
