package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTestSupport.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.ops.vision.VisionOps;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** vision.onnx_non_max_suppression: relation, kernel, and kernel coverage of VisionOps. */
class VisionOpsTest {
    private static final String NMS = "vision.onnx_non_max_suppression";

    // ---- non-maximum suppression ----

    private static NDArray boxes(double... v) {
        return nd(DType.FLOAT32, s(1, v.length / 4, 4), v);
    }

    private static NDArray scalarI64(long v) {
        return NDArray.fromLongs(DType.INT64, s(1), new long[] {v});
    }

    @Test
    void nmsRelation() {
        Attrs a = attrs("center_point_box", 0);
        assertEquals("Tensor[(?, 3), int64]", infer(NMS, a, tt(DType.FLOAT32, "1", "6", "4"), tt(DType.FLOAT32, "1", "2", "6"),
                tt(DType.INT64, "1"), tt(DType.FLOAT32, "1"), tt(DType.FLOAT32)).toString());
        assertRelationError(NMS + ": boxes must have shape [batches, boxes, 4], got Tensor[(1, 6, 5), float32]", NMS, a,
                tt(DType.FLOAT32, "1", "6", "5"), tt(DType.FLOAT32, "1", "2", "6"), tt(DType.INT64, "1"), tt(DType.FLOAT32, "1"), tt(DType.FLOAT32));
        assertRelationError(NMS + ": iou_threshold must be a scalar or a 1-element tensor, got Tensor[(2), float32]", NMS, a,
                tt(DType.FLOAT32, "1", "6", "4"), tt(DType.FLOAT32, "1", "2", "6"), tt(DType.INT64, "1"), tt(DType.FLOAT32, "2"), tt(DType.FLOAT32));
        assertTrue(defers(NMS, a, hole(), tt(DType.FLOAT32, "1", "2", "6"), tt(DType.INT64, "1"), tt(DType.FLOAT32, "1"), tt(DType.FLOAT32)));
        assertThrows(RuntimeException.class, () -> infer(NMS, attrs("center_point_box", 2), tt(DType.FLOAT32, "1", "6", "4"),
                tt(DType.FLOAT32, "1", "2", "6"), tt(DType.INT64, "1"), tt(DType.FLOAT32, "1"), tt(DType.FLOAT32)));
    }

    private static dev.relayfarm.ir.IncompleteType hole() {
        return dev.relayfarm.ir.IncompleteType.fresh();
    }

    @Test
    void nmsKernelSuppressesByIouAndScoreAndLimit() {
        // Boxes 0,1,2 overlap heavily (IoU ~0.82 / ~0.68); 3,4 overlap each other; 5 is alone.
        NDArray b = boxes(0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101);
        NDArray sc = nd(DType.FLOAT32, s(1, 1, 6), 0.9, 0.75, 0.6, 0.95, 0.5, 0.3);
        NDArray out = run(NMS, attrs("center_point_box", 0), b, sc, scalarI64(3), f32(0.5), f32(0.0));
        assertArrayEquals(new int[] {3, 3}, out.shape());
        assertArrayEquals(new long[] {0, 0, 3, 0, 0, 0, 0, 0, 5}, out.longData());
        // A score threshold drops box 5 (0.3 is not > 0.4); the limit 2 keeps the two best survivors.
        out = run(NMS, attrs("center_point_box", 0), b, sc, scalarI64(2), f32(0.5), f32(0.4));
        assertArrayEquals(new long[] {0, 0, 3, 0, 0, 0}, out.longData());
        // max_output_boxes_per_class = 0 keeps nothing: a [0, 3] result.
        out = run(NMS, attrs("center_point_box", 0), b, sc, scalarI64(0), f32(0.5), f32(0.0));
        assertArrayEquals(new int[] {0, 3}, out.shape());
    }

    @Test
    void nmsKernelCenterFormatFlippedCornersTiesAndClasses() {
        // Center format [xc, yc, w, h]: boxes 0 and 1 coincide (IoU 1 > 0.5), 2 is disjoint.
        NDArray c = boxes(0.5, 0.5, 1, 1, 0.5, 0.5, 1, 1, 5, 5, 1, 1);
        NDArray sc = nd(DType.FLOAT32, s(1, 2, 3), 0.8, 0.8, 0.1, 0.1, 0.2, 0.3);
        NDArray out = run(NMS, attrs("center_point_box", 1), c, sc, scalarI64(5), f32(0.5), f32(0.0));
        // Class 0: a tie at 0.8 keeps the lower index 0; class 1: 2 (0.3), then 1 (0.2); 0 is suppressed by 1.
        assertArrayEquals(new long[] {0, 0, 0, 0, 0, 2, 0, 1, 2, 0, 1, 1}, out.longData());
        // Corner order does not matter: (1,1,0,0) is the same box as (0,0,1,1).
        NDArray flipped = boxes(1, 1, 0, 0, 0, 0, 1, 1);
        out = run(NMS, attrs("center_point_box", 0), flipped, nd(DType.FLOAT32, s(1, 1, 2), 0.6, 0.9), scalarI64(5), f32(0.5), f32(0.0));
        assertArrayEquals(new long[] {0, 0, 1}, out.longData());
        // IoU exactly at the threshold does not suppress (the test is strictly greater).
        NDArray half = boxes(0, 0, 1, 2, 0, 0, 1, 1);
        out = run(NMS, attrs("center_point_box", 0), half, nd(DType.FLOAT32, s(1, 1, 2), 0.9, 0.8), scalarI64(5), f32(0.5), f32(0.0));
        assertArrayEquals(new long[] {0, 0, 0, 0, 0, 1}, out.longData());
    }

    // ---- coverage ----

    static Map<String, Runnable> kernelTests() {
        Map<String, Runnable> m = new LinkedHashMap<>();
        m.put(NMS, () -> {
            new VisionOpsTest().nmsKernelSuppressesByIouAndScoreAndLimit();
            new VisionOpsTest().nmsKernelCenterFormatFlippedCornersTiesAndClasses();
        });
        return m;
    }

    @Test
    void everyMiscOperatorHasAKernelTest() {
        List<String> missing = new ArrayList<>();
        for (OpDef<?> def : VisionOps.defs()) {
            assertTrue(OpRegistry.find(def.name()).isPresent(), def.name() + " is not in the registry");
            if (!kernelTests().containsKey(def.name())) missing.add(def.name());
        }
        assertEquals(List.of(), missing, "operators without a kernel test entry");
        VisionOps.defs().forEach(d -> kernelTests().get(d.name()).run());
    }
}
