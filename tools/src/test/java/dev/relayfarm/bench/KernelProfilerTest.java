package dev.relayfarm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Function;
import dev.relayfarm.text.RelayParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** FLOPs of fused primitives counted on their anchors, and the bytes they move, from typed shapes. */
class KernelProfilerTest {
    private static Function main(String body) {
        return RelayParser.parseModule("#[version = \"0.0.5\"]\n" + body, "t").main().orElseThrow();
    }

    @Test
    void groupedAndBlockedConvolutionsCountMacsPerOutput() {
        // 16 -> 32 channels in 4 groups, 3x3, 8x8 out: each output reads 16/4 * 3 * 3 inputs
        Function grouped = main("""
                def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(32, 4, 3, 3), float32]) {
                  nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=4))
                }
                """);
        assertEquals(OptionalLong.of(2L * 32 * 8 * 8 * 4 * 3 * 3), KernelProfiler.flops(grouped));
        // the same count for the blocked layout: 16 -> 8 channels, 1x1, data NCHW8c, weight OIHW8i4o
        Function blocked = main("""
                def @main(%x: Tensor[(1, 2, 6, 6, 8), float32], %w: Tensor[(2, 2, 1, 1, 8, 4), float32]) {
                  nn.contrib_conv2d_NCHWc(%x, %w, channels=8, kernel_size=[1, 1], data_layout="NCHW8c", kernel_layout="OIHW8i4o", out_layout="NCHW4c")
                }
                """);
        assertEquals(OptionalLong.of(2L * 8 * 6 * 6 * 16), KernelProfiler.flops(blocked));
    }

    @Test
    void bytesCountEachArgumentAndTheResultOnce() {
        // a depthwise 3x3 on NCHW16c: data 1*2*8*8*16 + weight 2*1*3*3*1*16 float32 in, 1*2*8*8*16 out
        Function dw = main("""
                def @main(%x: Tensor[(1, 2, 8, 8, 16), float32], %w: Tensor[(2, 1, 3, 3, 1, 16), float32]) {
                  nn.contrib_conv2d_NCHWc(%x, %w, padding=[1, 1, 1, 1], groups=32, data_layout="NCHW16c", kernel_layout="OIHW1i16o", out_layout="NCHW16c")
                }
                """);
        assertEquals(4L * (2048 + 288 + 2048), KernelProfiler.bytes(dw));
        // float16 takes 2 bytes, a tuple result counts its fields, a read used twice counts once
        assertEquals(2L * 6 + 2L * (6 + 6), KernelProfiler.bytes(main("""
                def @main(%x: Tensor[(2, 3), float16]) { (add(%x, %x), exp(%x)) }
                """)));
    }

    @Test
    void matrixProductsCountTheReducedDimension() {
        assertEquals(OptionalLong.of(2L * 2 * 4 * 8), KernelProfiler.flops(main("""
                def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) { add(nn.dense(%x, %w), 1f) }
                """)));
        assertEquals(OptionalLong.of(2L * 3 * 5 * 6 * 7), KernelProfiler.flops(main("""
                def @main(%x: Tensor[(3, 5, 7), float32], %y: Tensor[(3, 6, 7), float32]) { nn.batch_matmul(%x, %y) }
                """)));
        assertEquals(OptionalLong.empty(), KernelProfiler.flops(main("""
                def @main(%x: Tensor[(2, 8), float32]) { exp(%x) }
                """)));
    }

    @Test
    void theScalingBoundCountsMemoryBoundKernelsAtTheBandwidth() {
        KernelProfiler.Options o = new KernelProfiler.Options(1, 0, 1, Double.NaN, Double.NaN);
        // a dense streaming 200 MB in 10 ms (20 GB/s) and a convolution of 10 ms that moves 2 MB
        KernelProfiler.Row dense = new KernelProfiler.Row("d", "nn.dense", "", "", 1, 10, 0.5, 1, 200_000_000);
        KernelProfiler.Row conv = new KernelProfiler.Row("c", "nn.conv2d", "", "", 1, 10, 0.5, 1, 2_000_000);
        KernelProfiler.Profile p = new KernelProfiler.Profile("m", o, java.util.List.of(dense, conv), 20, 0, 20);
        // at 25 GB/s on two threads the dense needs 8 ms, the convolution 5: 20 / 13
        assertEquals(20.0 / 13, p.scalingBound(2, 25, 32L << 20), 1e-12);
        // with bandwidth to spare every kernel halves; so it does when a cache holds the dense's bytes too
        assertEquals(2.0, p.scalingBound(2, 1000, 32L << 20), 1e-12);
        assertEquals(2.0, p.scalingBound(2, 25, 256L << 20), 1e-12);
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> p.scalingBound(2, 0, 0));
    }
}
