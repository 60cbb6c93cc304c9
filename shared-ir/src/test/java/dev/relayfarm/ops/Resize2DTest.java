package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.NDArray;
import org.junit.jupiter.api.Test;

class Resize2DTest {
    private static final String OP = "image.resize2d";
    private static final NDArray X = arr(new int[] {1, 1, 2, 2}, 1, 2, 3, 4);

    @Test
    void relation() {
        assertEquals("Tensor[(n, 3, 10, 20), float32]", inferText(OP, attrs("size", ints(10, 20)), f32("n", 3, "h", "w")));
        assertEquals("Tensor[(1, 10, 20, 3), int32]", inferText(OP, attrs("size", ints(10, 20), "layout", "NHWC", "out_dtype", "int32"), f32(1, 5, 5, 3)));
        assertTrue(defers(OP, attrs("size", ints(10, 20)), hole()));
        assertEquals("image.resize2d: attribute 'size' is required", relationError(OP, attrs(), f32(1, 3, 4, 4)));
        assertEquals("image.resize2d: method must be \"nearest_neighbor\", \"linear\" or \"cubic\", got \"area\"",
                relationError(OP, attrs("size", ints(2, 2), "method", "area"), f32(1, 3, 4, 4)));
        assertEquals("image.resize2d: rounding_method \"up\" is not one of round, floor, ceil, round_prefer_floor, round_prefer_ceil",
                relationError(OP, attrs("size", ints(2, 2), "rounding_method", "up"), f32(1, 3, 4, 4)));
        assertEquals("image.resize2d: data must have rank 4, got Tensor[(3, 4, 4), float32]", relationError(OP, attrs("size", ints(2, 2)), f32(3, 4, 4)));
    }

    @Test
    void nearest() {
        assertValues(run1(OP, attrs("size", ints(4, 4), "method", "nearest_neighbor", "coordinate_transformation_mode", "asymmetric"), X),
                new int[] {1, 1, 4, 4}, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4);
        NDArray row = arr(new int[] {1, 1, 1, 2}, 10, 20);
        String[][] expectations = {{"floor", "10,10,20"}, {"round", "10,20,20"}, {"ceil", "10,20,20"}};
        for (String[] e : expectations) {
            NDArray out = run1(OP, attrs("size", ints(1, 3), "method", "nearest_neighbor", "coordinate_transformation_mode", "asymmetric",
                    "rounding_method", e[0]), row);
            assertEquals(e[1], (int) out.getDouble(0) + "," + (int) out.getDouble(1) + "," + (int) out.getDouble(2), e[0]);
        }
        // exact halves: 0.5 and 1.5 (1.5 rounds to 2, clamped to 1)
        assertValues(run1(OP, attrs("size", ints(1, 4), "method", "nearest_neighbor", "coordinate_transformation_mode", "asymmetric",
                "rounding_method", "round_prefer_floor"), row), new int[] {1, 1, 1, 4}, 10, 10, 20, 20);
        assertValues(run1(OP, attrs("size", ints(1, 4), "method", "nearest_neighbor", "coordinate_transformation_mode", "asymmetric",
                "rounding_method", "round_prefer_ceil"), row), new int[] {1, 1, 1, 4}, 10, 20, 20, 20);
        // NHWC, channels independent
        NDArray nhwc = arr(new int[] {1, 1, 2, 2}, 1, -1, 2, -2);
        assertValues(run1(OP, attrs("size", ints(1, 4), "layout", "NHWC", "method", "nearest_neighbor", "coordinate_transformation_mode", "asymmetric"), nhwc),
                new int[] {1, 1, 4, 2}, 1, -1, 1, -1, 2, -2, 2, -2);
    }

    @Test
    void linear() {
        assertValues(run1(OP, attrs("size", ints(3, 3), "coordinate_transformation_mode", "align_corners"), X),
                new int[] {1, 1, 3, 3}, 1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4);
        // half_pixel: sample points -0.25, 0.25, 0.75, 1.25 (edges clamp)
        double[] t = {0, 0.25, 0.75, 1};
        double[] want = new double[16];
        for (int y = 0; y < 4; y++) for (int x = 0; x < 4; x++) want[y * 4 + x] = 1 + 2 * t[y] + t[x];
        assertValues(run1(OP, attrs("size", ints(4, 4)), X), new int[] {1, 1, 4, 4}, want);
        // pytorch_half_pixel with an output of 1 samples coordinate 0
        assertValues(run1(OP, attrs("size", ints(1, 1), "coordinate_transformation_mode", "pytorch_half_pixel"), X), new int[] {1, 1, 1, 1}, 1);
        // tf_crop_and_resize: the third sample lies outside the image
        NDArray row = arr(new int[] {1, 1, 1, 2}, 10, 20);
        assertValues(run1(OP, attrs("size", ints(1, 3), "coordinate_transformation_mode", "tf_crop_and_resize",
                "roi", new double[] {0, 0, 0, 2}, "extrapolation_value", 7.0), row), new int[] {1, 1, 1, 3}, 10, 20, 7);
    }

    @Test
    void cubic() {
        // Keys' kernel (alpha -0.5) at t = 0.5 weighs the taps -0.0625, 0.5625, 0.5625, -0.0625
        NDArray spike = arr(new int[] {1, 1, 1, 4}, 0, 0, 1, 0);
        NDArray out = run1(OP, attrs("size", ints(1, 7), "method", "cubic", "coordinate_transformation_mode", "align_corners"), spike);
        assertEquals(0.5625, out.getDouble(3), 1e-6);
        assertEquals(-0.0625, out.getDouble(1), 1e-6);
        // interior samples of a ramp are reproduced exactly
        NDArray ramp = arr(new int[] {1, 1, 1, 6}, 0, 1, 2, 3, 4, 5);
        NDArray r = run1(OP, attrs("size", ints(1, 11), "method", "cubic", "coordinate_transformation_mode", "align_corners"), ramp);
        for (int x = 2; x <= 6; x++) assertEquals(x / 2.0, r.getDouble(x), 1e-6);
        // cubic_exclude renormalizes over the taps inside the image: a constant stays constant at the border
        NDArray flat = arr(new int[] {1, 1, 2, 2}, 5, 5, 5, 5);
        NDArray f = run1(OP, attrs("size", ints(3, 3), "method", "cubic", "cubic_exclude", 1), flat);
        for (int i = 0; i < 9; i++) assertEquals(5, f.getDouble(i), 1e-6);
        NDArray e = run1(OP, attrs("size", ints(1, 5), "method", "cubic", "cubic_exclude", 1, "coordinate_transformation_mode", "asymmetric"), ramp);
        // x = 0 samples coordinate 0: taps -1 (excluded), 0 (weight 1), 1, 2 (weight 0 at t = 0)
        assertEquals(0, e.getDouble(0), 1e-6);
    }

    @Test
    void onnxScales() {
        // ONNX Resize with scale 0.6: width 4 gives 2 outputs sampled at (x + 0.5) / 0.6 - 0.5 = 0.333 and 2.0,
        // not at the size ratio's 0.5 and 2.5
        NDArray x = arr(new int[] {1, 1, 2, 4}, 1, 2, 3, 4, 5, 6, 7, 8);
        NDArray out = run1(OP, attrs("size", ints(1, 2), "scales", new double[] {0.6, 0.6}), x);
        assertEquals(2.6666667, out.getDouble(0), 1e-6);
        assertEquals(4.3333333, out.getDouble(1), 1e-6);
        assertValues(run1(OP, attrs("size", ints(1, 2)), x), new int[] {1, 1, 1, 2}, 3.5, 5.5);
        // align_corners aligns the unrounded length 4 * 0.6 = 2.4: the second sample is at 3 / 1.4
        NDArray ac = run1(OP, attrs("size", ints(1, 2), "scales", new double[] {0.6, 0.6}, "coordinate_transformation_mode", "align_corners"), x);
        assertEquals(1 + 3 / 1.4, ac.getDouble(1), 1e-6);
        // half_pixel_symmetric re-centres by in / 2 * (1 - out / (scale * in)): width 4 at scale 0.6 shifts by 2 * (1 - 2 / 2.4)
        NDArray sym = run1(OP, attrs("size", ints(1, 2), "scales", new double[] {0.6, 0.6}, "coordinate_transformation_mode", "half_pixel_symmetric"), x);
        double shift = 2 * (1 - 2 / 2.4);
        // (the single row samples y = 1 * (1 - 1 / 1.2) + 0.5 / 0.6 - 0.5 = 0.5, halfway between the rows: + 2)
        assertEquals(1 + 2 + (shift + 0.5 / 0.6 - 0.5), sym.getDouble(0), 1e-6);
        assertEquals("image.resize2d: scales must be two positive numbers, got [0.5]",
                relationError(OP, attrs("size", ints(2, 2), "scales", new double[] {0.5}), f32(1, 3, 4, 4)));
    }
}
