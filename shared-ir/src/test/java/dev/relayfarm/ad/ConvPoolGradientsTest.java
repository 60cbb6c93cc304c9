package dev.relayfarm.ad;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.IRModule;
import org.junit.jupiter.api.Test;

/**
 * The convolution and pooling rules composed in a whole network, against finite differences; and what they refuse,
 * with a message naming the operator and the reason.
 */
class ConvPoolGradientsTest {
    @Test
    void lenetLossMatchesFiniteDifferences() {
        IRModule m = ReverseModeTest.parse(ConvGradientCompileTest.LENET.replace("float32", "float64"));
        GradientCheck.Report report = GradientCheck.check(m, ReverseModeTest.inputs(m, -1, 1), 1e-6, 5);
        assertTrue(report.worstRelativeError() < OpGradientsCheckTest.TOLERANCE, report.toString());
    }

    private static String refusal(String program) {
        return assertThrows(GradientException.class, () -> ReverseMode.gradient(ReverseModeTest.parse(program), "main")).getMessage();
    }

    @Test
    void nonCanonicalLayoutsAreRefused() {
        assertEquals("gradient: nn.conv2d: the gradient needs data_layout NCHW and kernel_layout OIHW, got NHWC / HWIO -> NHWC at test:3:3", refusal("""
                def @main(%x: Tensor[(1, 5, 5, 2), float64], %w: Tensor[(3, 3, 2, 4), float64]) {
                  nn.conv2d(%x, %w, data_layout="NHWC", kernel_layout="HWIO")
                }
                """));
        assertEquals("gradient: nn.conv2d_transpose: the gradient needs data_layout NCHW and kernel_layout IOHW, got NCHW / OIHW -> NCHW at test:2:83", refusal("""
                def @main(%x: Tensor[(1, 2, 5, 5), float64], %w: Tensor[(4, 2, 3, 3), float64]) { nn.conv2d_transpose(%x, %w, kernel_layout="OIHW") }
                """));
        assertEquals("gradient: nn.max_pool2d: the gradient needs layout NCHW, got NHWC -> NHWC at test:2:48", refusal("""
                def @main(%x: Tensor[(1, 4, 4, 2), float64]) { nn.max_pool2d(%x, pool_size=[2, 2], layout="NHWC") }
                """));
        assertEquals("gradient: nn.global_avg_pool2d: the gradient needs out_layout equal to layout, got NCHW -> NHWC at test:2:48", refusal("""
                def @main(%x: Tensor[(1, 2, 4, 4), float64]) { nn.global_avg_pool2d(%x, out_layout="NHWC") }
                """));
    }

    @Test
    void aChangedOutputDtypeIsRefused() {
        assertEquals("gradient: nn.conv2d: the gradient needs out_dtype equal to the input's, got float64 at test:2:83", refusal("""
                def @main(%x: Tensor[(1, 2, 5, 5), float32], %w: Tensor[(4, 2, 3, 3), float32]) { nn.conv2d(%x, %w, out_dtype="float64") }
                """));
    }
}
