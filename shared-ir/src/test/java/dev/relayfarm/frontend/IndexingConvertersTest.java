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
 * What the ONNX node tests leave out of the indexing converters: TensorScatter without write_indices
 * and past the cache end, ScatterND's index tuples in ONNX's last axis, and the errors for attributes
 * outside the spec.
 */
class IndexingConvertersTest {
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
    void tensorScatterWritesAtZeroWithoutWriteIndices() {
        // cache (batch 2, max_seq 3, 1), update of sequence_length 2 along axis -2
        NDArray past = f32(new int[] {2, 3, 1}, 1, 2, 3, 4, 5, 6);
        NDArray update = f32(new int[] {2, 2, 1}, 10, 20, 30, 40);
        assertArrayEquals(new float[] {10, 20, 3, 30, 40, 6}, run("TensorScatter", 24, List.of(past, update)).floatData());
    }

    @Test
    void tensorScatterWritesPerBatchOffsetsAndRejectsThePastEndInLinearMode() {
        NDArray past = f32(new int[] {2, 3, 1}, 1, 2, 3, 4, 5, 6);
        NDArray update = f32(new int[] {2, 2, 1}, 10, 20, 30, 40);
        assertArrayEquals(new float[] {1, 10, 20, 30, 40, 6},
                run("TensorScatter", 24, List.of(past, update, i64(new int[] {2}, 1, 0))).floatData());
        assertArrayEquals(new float[] {20, 2, 10, 30, 40, 6},
                run("TensorScatter", 24, List.of(past, update, i64(new int[] {2}, 2, 0)), str("mode", "circular")).floatData());
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> run("TensorScatter", 24, List.of(past, update, i64(new int[] {2}, 2, 0))));
        assertTrue(e.getMessage().contains("scatter_elements: index 3 is out of range for axis 1 of size 3"), e.getMessage());
    }

    @Test
    void scatterNdTakesIndexTuplesFromTheLastAxis() {
        NDArray data = f32(new int[] {2, 2}, 1, 2, 3, 4);
        // two tuples (1, 0) and (0, 1): ONNX indices (2, 2) with the tuple in the last axis
        NDArray y = run("ScatterND", 18, List.of(data, i64(new int[] {2, 2}, 1, 0, 0, 1), f32(new int[] {2}, 7, 8)), str("reduction", "add"));
        assertArrayEquals(new float[] {1, 10, 10, 4}, y.floatData());
    }

    @Test
    void attributesOutsideTheSpecAreRejectedByName() {
        NDArray data = f32(new int[] {2, 2}, 1, 2, 3, 4);
        RuntimeException r = assertThrows(RuntimeException.class, () -> run("ScatterElements", 18,
                List.of(data, i64(new int[] {1, 2}, 0, 1), f32(new int[] {1, 2}, 5, 6)), str("reduction", "mean")));
        assertTrue(r.getMessage().contains("reduction \"mean\" is not one of none, add, mul, min, max"), r.getMessage());
        NDArray x = f32(new int[] {1, 4, 1, 1}, 1, 2, 3, 4);
        RuntimeException m = assertThrows(RuntimeException.class,
                () -> run("DepthToSpace", 13, List.of(x), intAttr("blocksize", 2), str("mode", "RDC")));
        assertTrue(m.getMessage().contains("mode \"RDC\" is not DCR or CRD"), m.getMessage());
        RuntimeException s = assertThrows(RuntimeException.class, () -> run("SpaceToDepth", 13, List.of(x), intAttr("blocksize", 2)));
        assertTrue(s.getMessage().contains("spatial dims 1x1 are not divisible by blocksize 2"), s.getMessage());
    }
}
