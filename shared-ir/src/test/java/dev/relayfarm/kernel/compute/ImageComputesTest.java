package dev.relayfarm.kernel.compute;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.kernel.codegen.CCompiler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * image.resize2d through {@link OpComputes}: every method x coordinate mode, up- and downscaling, the
 * rounding methods, ONNX scales, crop-and-resize with extrapolation, NHWC and integer data; and
 * image.grid_sample in every method x padding mode x align_corners, 2-D and volumetric; one module,
 * compared with the interpreter.
 */
class ImageComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        String[] methods = {"nearest_neighbor", "linear", "cubic"};
        String[] modes = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn", "half_pixel_symmetric"};
        for (String m : methods) {
            for (String mode : modes) {
                String attrs = "method=\"" + m + "\", coordinate_transformation_mode=\"" + mode + "\"";
                CASES.add("fn (%x: Tensor[(1, 2, 4, 5), float32]) { image.resize2d(%x, size=[8, 7], " + attrs + ") }");
                CASES.add("fn (%x: Tensor[(1, 2, 7, 9), float32]) { image.resize2d(%x, size=[3, 4], " + attrs + ") }");
            }
            CASES.add("fn (%x: Tensor[(1, 2, 4, 5), float32]) { image.resize2d(%x, size=[6, 3], method=\"" + m
                    + "\", coordinate_transformation_mode=\"tf_crop_and_resize\", roi=[0.1f, -0.2f, 1.3f, 0.9f], extrapolation_value=-7f) }");
            CASES.add("fn (%x: Tensor[(1, 4, 5, 3), float32]) { image.resize2d(%x, size=[7, 9], layout=\"NHWC\", method=\"" + m + "\") }");
            CASES.add("fn (%x: Tensor[(1, 1, 4, 4), float32]) { image.resize2d(%x, size=[2, 2], method=\"" + m
                    + "\", coordinate_transformation_mode=\"half_pixel_symmetric\", scales=[0.6f, 0.6f]) }");
            CASES.add("fn (%x: Tensor[(1, 1, 3, 5), float32]) { image.resize2d(%x, size=[7, 12], method=\"" + m
                    + "\", coordinate_transformation_mode=\"asymmetric\", scales=[2.5f, 2.4f]) }");
        }
        for (String r : new String[] {"round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"}) {
            CASES.add("fn (%x: Tensor[(1, 2, 4, 6), float32]) { image.resize2d(%x, size=[8, 9], method=\"nearest_neighbor\", rounding_method=\""
                    + r + "\", coordinate_transformation_mode=\"asymmetric\") }");
            CASES.add("fn (%x: Tensor[(1, 2, 4, 6), float32]) { image.resize2d(%x, size=[8, 15], method=\"nearest_neighbor\", rounding_method=\""
                    + r + "\", coordinate_transformation_mode=\"align_corners\") }");
        }
        CASES.add("fn (%x: Tensor[(1, 2, 5, 5), float32]) { image.resize2d(%x, size=[9, 8], method=\"cubic\", cubic_alpha=-0.75f, cubic_exclude=1) }");
        CASES.add("fn (%x: Tensor[(1, 2, 4, 4), float64]) { image.resize2d(%x, size=[7, 7], method=\"cubic\") }");
        CASES.add("fn (%x: Tensor[(1, 2, 4, 4), uint8]) { image.resize2d(%x, size=[7, 7], method=\"linear\") }");
        CASES.add("fn (%x: Tensor[(1, 2, 4, 4), int32]) { image.resize2d(%x, size=[8, 8], method=\"nearest_neighbor\") }");
        CASES.add("fn (%x: Tensor[(1, 2, 4, 4), float32]) { image.resize2d(%x, size=[7, 7], out_dtype=\"float64\") }");
        // grid_sample: random grids in [-2, 2) reach every padding branch (and reflect more than once)
        for (String m : new String[] {"nearest", "bilinear", "bicubic"}) {
            for (String p : new String[] {"zeros", "border", "reflection"}) {
                for (String align : new String[] {"False", "True"}) {
                    String attrs = "method=\"" + m + "\", padding_mode=\"" + p + "\", align_corners=" + align;
                    CASES.add("fn (%x: Tensor[(2, 3, 4, 5), float32], %g: Tensor[(2, 2, 6, 7), float32]) { image.grid_sample(%x, %g, " + attrs + ") }");
                    if (!m.equals("bicubic")) {
                        CASES.add("fn (%x: Tensor[(1, 2, 3, 4, 5), float32], %g: Tensor[(1, 3, 2, 3, 4), float32]) { image.grid_sample(%x, %g, "
                                + attrs + ", layout=\"NCDHW\") }");
                    }
                }
            }
        }
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(13);
        assertEquals(93, CASES.size());
    }
}
