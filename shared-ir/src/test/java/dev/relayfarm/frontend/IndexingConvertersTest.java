package dev.relayfarm.frontend;

import static dev.relayfarm.frontend.OnnxImporterTest.f32;
import static dev.relayfarm.frontend.OnnxImporterTest.i64;
import static dev.relayfarm.frontend.OnnxImporterTest.intAttr;
import static dev.relayfarm.frontend.OnnxImporterTest.runOneNode;
import static dev.relayfarm.frontend.OnnxImporterTest.str;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.frontend.proto.Onnx.AttributeProto;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the ONNX node tests leave out of the indexing converters: TensorScatter without write_indices
 * and past the cache end, ScatterND's index tuples in ONNX's last axis, and the errors for attributes
 * outside the spec.
 */
class IndexingConvertersTest {
    @Test
    void tensorScatterWritesAtZeroWithoutWriteIndices() {
        // cache (batch 2, max_seq 3, 1), update of sequence_length 2 along axis -2
        NDArray past = f32(new int[] {2, 3, 1}, 1, 2, 3, 4, 5, 6);
        NDArray update = f32(new int[] {2, 2, 1}, 10, 20, 30, 40);
        assertArrayEquals(new float[] {10, 20, 3, 30, 40, 6}, runOneNode("TensorScatter", 24, List.of(past, update)).floatData());
    }

    @Test
    void tensorScatterWritesPerBatchOffsetsAndRejectsThePastEndInLinearMode() {
        NDArray past = f32(new int[] {2, 3, 1}, 1, 2, 3, 4, 5, 6);
        NDArray update = f32(new int[] {2, 2, 1}, 10, 20, 30, 40);
        assertArrayEquals(new float[] {1, 10, 20, 30, 40, 6},
                runOneNode("TensorScatter", 24, List.of(past, update, i64(new int[] {2}, 1, 0))).floatData());
        assertArrayEquals(new float[] {20, 2, 10, 30, 40, 6},
                runOneNode("TensorScatter", 24, List.of(past, update, i64(new int[] {2}, 2, 0)), str("mode", "circular")).floatData());
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> runOneNode("TensorScatter", 24, List.of(past, update, i64(new int[] {2}, 2, 0))));
        assertTrue(e.getMessage().contains("scatter_elements: index 3 is out of range for axis 1 of size 3"), e.getMessage());
    }

    @Test
    void scatterNdTakesIndexTuplesFromTheLastAxis() {
        NDArray data = f32(new int[] {2, 2}, 1, 2, 3, 4);
        // two tuples (1, 0) and (0, 1): ONNX indices (2, 2) with the tuple in the last axis
        NDArray y = runOneNode("ScatterND", 18, List.of(data, i64(new int[] {2, 2}, 1, 0, 0, 1), f32(new int[] {2}, 7, 8)), str("reduction", "add"));
        assertArrayEquals(new float[] {1, 10, 10, 4}, y.floatData());
    }

    @Test
    void attributesOutsideTheSpecAreRejectedByName() {
        NDArray data = f32(new int[] {2, 2}, 1, 2, 3, 4);
        RuntimeException r = assertThrows(RuntimeException.class, () -> runOneNode("ScatterElements", 18,
                List.of(data, i64(new int[] {1, 2}, 0, 1), f32(new int[] {1, 2}, 5, 6)), str("reduction", "mean")));
        assertTrue(r.getMessage().contains("reduction \"mean\" is not one of none, add, mul, min, max"), r.getMessage());
        NDArray x = f32(new int[] {1, 4, 1, 1}, 1, 2, 3, 4);
        RuntimeException m = assertThrows(RuntimeException.class,
                () -> runOneNode("DepthToSpace", 13, List.of(x), intAttr("blocksize", 2), str("mode", "RDC")));
        assertTrue(m.getMessage().contains("mode \"RDC\" is not DCR or CRD"), m.getMessage());
        RuntimeException s = assertThrows(RuntimeException.class, () -> runOneNode("SpaceToDepth", 13, List.of(x), intAttr("blocksize", 2)));
        assertTrue(s.getMessage().contains("spatial dims 1x1 are not divisible by blocksize 2"), s.getMessage());
    }
}
