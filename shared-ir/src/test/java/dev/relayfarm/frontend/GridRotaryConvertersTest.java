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
 * What the ONNX node tests leave out of GridSample and RotaryEmbedding: GridSample's opset 16 mode
 * names and the grid's x-first coordinate order checked by hand, and the errors for inputs and
 * attributes outside the spec.
 */
class GridRotaryConvertersTest {
    @Test
    void gridSampleReadsXThenYFromTheLastGridAxisUnderBothModeNames() {
        NDArray x = f32(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);
        // two points: (x=1, y=-1) is the top-right pixel, (x=-1, y=1) the bottom-left one
        NDArray grid = f32(new int[] {1, 1, 2, 2}, 1, -1, -1, 1);
        assertArrayEquals(new float[] {2, 3}, runOneNode("GridSample", 16, List.of(x, grid), str("mode", "bilinear"), intAttr("align_corners", 1)).floatData());
        assertArrayEquals(new float[] {2, 3}, runOneNode("GridSample", 20, List.of(x, grid), str("mode", "linear"), intAttr("align_corners", 1)).floatData());
    }

    @Test
    void gridSampleRejectsVolumetricCubicAndUnknownPadding() {
        NDArray cube = f32(new int[] {1, 1, 1, 1, 1}, 1);
        NDArray grid3 = f32(new int[] {1, 1, 1, 1, 3}, 0, 0, 0);
        RuntimeException c = assertThrows(RuntimeException.class, () -> runOneNode("GridSample", 20, List.of(cube, grid3), str("mode", "cubic")));
        assertTrue(c.getMessage().contains("cubic mode is only defined for 4-D input"), c.getMessage());
        NDArray x = f32(new int[] {1, 1, 1, 1}, 1);
        NDArray grid = f32(new int[] {1, 1, 1, 2}, 0, 0);
        RuntimeException p = assertThrows(RuntimeException.class, () -> runOneNode("GridSample", 20, List.of(x, grid), str("padding_mode", "wrap")));
        assertTrue(p.getMessage().contains("padding_mode \"wrap\" is not one of zeros, border, reflection"), p.getMessage());
    }

    @Test
    void rotaryEmbeddingRotatesPairsByTheGatheredAngle() {
        // one head of size 2, position 1 whose angle is 90 degrees: (1, 0) turns to (0, 1)
        NDArray x = f32(new int[] {1, 1, 1, 2}, 1, 0);
        NDArray cos = f32(new int[] {2, 1}, 1, 0);
        NDArray sin = f32(new int[] {2, 1}, 0, 1);
        float[] y = runOneNode("RotaryEmbedding", 23, List.of(x, cos, sin, i64(new int[] {1, 1}, 1))).floatData();
        assertArrayEquals(new float[] {0, 1}, y, 1e-6f);
    }

    @Test
    void rotaryEmbeddingRejectsMissingHeadsAndOddRotaryDims() {
        NDArray x3 = f32(new int[] {1, 1, 4}, 1, 2, 3, 4);
        NDArray cos = f32(new int[] {1, 2}, 1, 1);
        NDArray ids = i64(new int[] {1, 1}, 0);
        RuntimeException h = assertThrows(RuntimeException.class, () -> runOneNode("RotaryEmbedding", 23, List.of(x3, cos, cos, ids)));
        assertTrue(h.getMessage().contains("needs num_heads dividing its hidden size, got num_heads=0"), h.getMessage());
        NDArray x4 = f32(new int[] {1, 1, 1, 4}, 1, 2, 3, 4);
        RuntimeException r = assertThrows(RuntimeException.class,
                () -> runOneNode("RotaryEmbedding", 23, List.of(x4, cos, cos, ids), intAttr("rotary_embedding_dim", 3)));
        assertTrue(r.getMessage().contains("rotary_embedding_dim 3 must be even and in [2, head_size 4]"), r.getMessage());
    }
}
