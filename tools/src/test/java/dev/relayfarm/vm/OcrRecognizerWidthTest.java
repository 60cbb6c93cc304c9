package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.bench.OrtRunner;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.frontend.RapidOcrModels;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 19's OCR line, its correctness half: PaddleOCR's PP-OCRv4 text recognizer ({@code ch_PP-OCRv4_rec_infer.onnx},
 * input {@code 1×3×48×W}) imported without pinning W ({@code x=1x3x48x?}), compiled once for the VM, where every group
 * with the width or the sequence length (W/8) in its shape is a width kernel (kernel/lower/WidthKernels), and run at
 * widths 160, 320 and 800 against ONNX Runtime on the same seeded inputs in [-1, 1]. Its speed against the model
 * compiled with each width pinned: {@code relayc bench MODEL --shape x=1x3x48x? --at x=1x3x48x160 ... --vs pinned}.
 */
class OcrRecognizerWidthTest {
    private static final double RTOL = 1e-4, ATOL = 1e-5;

    /** A seeded {@code [1, 3, 48, width]} input, uniform in [-1, 1] (the range PaddleOCR's normalization gives). */
    static NDArray input(int width, long seed) {
        Random r = new Random(seed);
        double[] v = new double[3 * 48 * width];
        for (int i = 0; i < v.length; i++) v[i] = r.nextDouble() * 2 - 1;
        return NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 3, 48, width}, v);
    }

    @Test
    void compiledOnceItMatchesOnnxRuntimeAtEveryWidthTried(@TempDir Path dir) throws IOException {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        Path onnx = RapidOcrModels.copy("ch_PP-OCRv4_rec_infer.onnx", dir.resolve("ch_PP-OCRv4_rec_infer.onnx"));
        VmProgram program = VmCompiler.compile(Stages.inferTypes(Stages.importModel(ModelSource.read(onnx), "x=1x3x48x?")), CompileOptions.host(3));
        long width = program.executable().kernels().stream().filter(k -> k.params().stream().anyMatch(t -> t.shape().lastIndexOf(TensorSpec.DYNAMIC) > 0)).count();
        assertTrue(width >= 40, "the backbone's convolutions and the neck's attention are width kernels: "
                + program.executable().kernels().stream().map(KernelSignature::name).toList());
        try (VirtualMachine vm = program.load(CCompiler.host().orElseThrow()); OrtRunner ort = OrtRunner.open(onnx, 1)) {
            // the three widths of the issue, then widths whose sizes inside fall in other residues mod 8 (168: a sequence of
            // 21; 161 and 37: odd widths, 81 and 19 after the first convolution, sequences of 20 and 5 as ONNX Runtime gives)
            for (int w : new int[] {160, 320, 800, 168, 161, 37}) {
                NDArray x = input(w, 1000 + w);
                NDArray want = ort.run(List.of(x)).getFirst();
                NDArray got = ((VmObject.Tensor) vm.runMain(x)).toNDArray();
                assertArrayEquals(want.shape(), got.shape(), "width " + w);
                if (w % 8 == 0) assertArrayEquals(new int[] {1, w / 8, 6625}, got.shape(), "width " + w);
                double worst = 0;
                int bad = 0;
                for (int i = 0; i < want.elementCount(); i++) {
                    double d = Math.abs(want.getDouble(i) - got.getDouble(i));
                    worst = Math.max(worst, d);
                    if (!(d <= ATOL + RTOL * Math.abs(want.getDouble(i)))) bad++;
                }
                System.out.printf(Locale.ROOT, "OcrRecognizerWidthTest: width %d: %s, max |VM - ONNX Runtime| = %.3g%n", w, java.util.Arrays.toString(got.shape()), worst);
                assertEquals(0, bad, "width " + w + ": elements outside rtol " + RTOL + " / atol " + ATOL + " (max abs diff " + worst + ")");
            }
        }
    }
}
