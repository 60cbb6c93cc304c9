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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the ONNX node tests leave out of GridSample and RotaryEmbedding: GridSample's opset 16 mode
 * names and the grid's x-first coordinate order checked by hand, and the errors for inputs and
 * attributes outside the spec.
 */
class GridRotaryConvertersTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;
    private static final int I64 = TensorProto.DataType.INT64_VALUE;

    private static AttributeProto str(String name, String v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.STRING)
                .setS(com.google.protobuf.ByteString.copyFromUtf8(v)).build();
    }

    private static AttributeProto intAttr(String name, long v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT).setI(v).build();
    }

    /** Runs a one-node graph over inputs named a, b, ... (float unless int64 data). */
    private static NDArray run(String op, long opset, List<NDArray> inputs, AttributeProto... attrs) {
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

    private static NDArray f32(int[] shape, double... v) {
        return NDArray.fromDoubles(DType.FLOAT32, shape, v);
    }

    private static NDArray i64(int[] shape, long... v) {
        return NDArray.fromLongs(DType.INT64, shape, v);
    }

    @Test
    void gridSampleReadsXThenYFromTheLastGridAxisUnderBothModeNames() {
        NDArray x = f32(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        // two points: (x=1, y=-1) is the top-right pixel, (x=-1, y=1) the bottom-left one
        NDArray grid = f32(new int[] {1, 1, 2, 2}, 1, -1, -1, 1);
        assertArrayEquals(new float[] {2, 3}, run("GridSample", 16, List.of(x, grid), str("mode", "bilinear"), intAttr("align_corners", 1)).floatData());
        assertArrayEquals(new float[] {2, 3}, run("GridSample", 20, List.of(x, grid), str("mode", "linear"), intAttr("align_corners", 1)).floatData());
    }

    @Test
    void gridSampleRejectsVolumetricCubicAndUnknownPadding() {
        NDArray cube = f32(new int[] {1, 1, 1, 1, 1}, 1);
        NDArray grid3 = f32(new int[] {1, 1, 1, 1, 3}, 0, 0, 0);
        RuntimeException c = assertThrows(RuntimeException.class, () -> run("GridSample", 20, List.of(cube, grid3), str("mode", "cubic")));
        assertTrue(c.getMessage().contains("cubic mode is only defined for 4-D input"), c.getMessage());
        NDArray x = f32(new int[] {1, 1, 1, 1}, 1);
        NDArray grid = f32(new int[] {1, 1, 1, 2}, 0, 0);
        RuntimeException p = assertThrows(RuntimeException.class, () -> run("GridSample", 20, List.of(x, grid), str("padding_mode", "wrap")));
        assertTrue(p.getMessage().contains("padding_mode \"wrap\" is not one of zeros, border, reflection"), p.getMessage());
    }

    @Test
    void rotaryEmbeddingRotatesPairsByTheGatheredAngle() {
        // one head of size 2, position 1 whose angle is 90 degrees: (1, 0) turns to (0, 1)
        NDArray x = f32(new int[] {1, 1, 1, 2}, 1, 0);
        NDArray cos = f32(new int[] {2, 1}, 1, 0);
        NDArray sin = f32(new int[] {2, 1}, 0, 1);
        float[] y = run("RotaryEmbedding", 23, List.of(x, cos, sin, i64(new int[] {1, 1}, 1))).floatData();
        assertArrayEquals(new float[] {0, 1}, y, 1e-6f);
    }

    @Test
    void rotaryEmbeddingRejectsMissingHeadsAndOddRotaryDims() {
        NDArray x3 = f32(new int[] {1, 1, 4}, 1, 2, 3, 4);
        NDArray cos = f32(new int[] {1, 2}, 1, 1);
        NDArray ids = i64(new int[] {1, 1}, 0);
        RuntimeException h = assertThrows(RuntimeException.class, () -> run("RotaryEmbedding", 23, List.of(x3, cos, cos, ids)));
        assertTrue(h.getMessage().contains("needs num_heads dividing its hidden size, got num_heads=0"), h.getMessage());
        NDArray x4 = f32(new int[] {1, 1, 1, 4}, 1, 2, 3, 4);
        RuntimeException r = assertThrows(RuntimeException.class,
                () -> run("RotaryEmbedding", 23, List.of(x4, cos, cos, ids), intAttr("rotary_embedding_dim", 3)));
        assertTrue(r.getMessage().contains("rotary_embedding_dim 3 must be even and in [2, head_size 4]"), r.getMessage());
    }
}
