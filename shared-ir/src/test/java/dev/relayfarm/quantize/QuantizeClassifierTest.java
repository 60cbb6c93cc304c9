package dev.relayfarm.quantize;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.runtime.CompiledModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21's accuracy line on the two other models it names, compiled (int8 with per-channel weights, calibrated on
 * at most 64 inputs, the int8 artifact against the float artifact on other seeded inputs):
 * <ul>
 * <li>ppocr_cls_mobilenetv3 (PaddleOCR's text direction classifier, {@code ../shared/onnx/models}): top-1 agreement
 *     on 200 rendered text lines ({@link TextLineImages}; 1,000 in the long suite), calibrated on 64 others, with
 *     mixed precision (the 4 activation points whose quantization alone disturbs the output most get 16 bits):
 *     199 of 200 (994 of 1,000; all-8-bit activations 197 and 987). Percentile calibration: KL's thresholds clip this
 *     MobileNetV3 too hard (188 of 200 when measured).
 * <li>light ResNet-50 ({@code ../shared/onnx/light}; long suite, its calibration runs the interpreter): output cosine
 *     similarity at least 0.99 on 4 seeded inputs, calibrated on 4. Its weights are constants (the light models'
 *     {@code ConstantOfShape} initializers), so its logits are alike: what this shows is that the whole network
 *     quantizes, compiles and keeps its numbers, not accuracy on data.
 * </ul>
 */
class QuantizeClassifierTest {
    @TempDir
    static Path tmp;

    @Test
    void ppocrClassifierAgreesWithFloatOnTextLines() throws IOException {
        Optional<Path> file = OnnxTestData.models().map(d -> d.resolve("ppocr_cls_mobilenetv3/model.onnx")).filter(Files::isRegularFile);
        assumeTrue(file.isPresent(), "../shared/onnx/models/ppocr_cls_mobilenetv3 is absent: skipped");
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        assumeTrue(TextLineImages.available(), "this JDK cannot draw text here (no fonts): skipped");
        IRModule model = Stages.inferTypes(Stages.importModel(ModelSource.read(file.get()), Map.of("x", List.of(1L, 3L, TextLineImages.HEIGHT * 1L, TextLineImages.WIDTH * 1L))));
        List<List<NDArray>> calibration = new ArrayList<>();
        for (long s = 0; s < 64; s++) calibration.add(List.of(TextLineImages.image(s)));
        QuantizeConfig config = QuantizeConfig.DEFAULT.withCalibration(Calibration.Mode.PERCENTILE).withMixedPrecision(new QuantizeConfig.MixedPrecision(4, 16));
        Quantizer.Result q = Quantizer.quantize(model, calibration, config);
        long int8Convs = QuantizeMnistTest.count(q.module(), "nn.conv2d", "int32");
        assertTrue(int8Convs >= 40, "only " + int8Convs + " of the classifier's 53 convolutions were quantized");
        long wide = q.calibration().points().stream().filter(p -> p.nbit() == 16).count();
        assertTrue(wide == 4, wide + " points widened to 16 bits, asked for 4");
        // the long suite checks the rate on five times as many lines
        int n = Boolean.getBoolean("relayfarm.long") ? 1000 : 200;
        Outcome o = compare(model, q.module(), "ppocr_cls", n, s -> TextLineImages.image(10_000 + s));
        System.out.printf("ppocr_cls int8 (%d integer convs, %d activation points 16-bit, percentile, 64 calibration lines): top-1 agreement with float %d/%d, "
                + "float picks class 0 for %d, cosine mean %.4f min %.4f%n", int8Convs, wide, o.agree(), n, o.firstClass(), o.meanCosine(), o.minCosine());
        assertTrue(o.firstClass() > n / 10 && o.firstClass() < n - n / 10, "the text lines should exercise both classes, class 0 for " + o.firstClass());
        // the 99%: all-8-bit activations reach 197/200 here (987/1000); the 4 most sensitive points at 16 bits 199 (994/1000)
        assertTrue(o.agree() >= 0.99 * n, "top-1 agreement " + o.agree() + "/" + n + " < 99%");
    }

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.long", matches = "true")
    void lightResNet50KeepsItsOutputs() throws IOException {
        Optional<Path> file = OnnxTestData.light().map(d -> d.resolve("light_resnet50.onnx")).filter(Files::isRegularFile);
        assumeTrue(file.isPresent(), "../shared/onnx/light/light_resnet50.onnx is absent: skipped");
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        IRModule model = Stages.inferTypes(Stages.importModel(ModelSource.read(file.get()), ""));
        LongFunction<NDArray> image = seed -> {
            Random r = new Random(seed);
            float[] v = new float[3 * 224 * 224];
            for (int i = 0; i < v.length; i++) v[i] = r.nextFloat();
            return NDArray.wrap(DType.FLOAT32, new int[] {1, 3, 224, 224}, v);
        };
        List<List<NDArray>> calibration = new ArrayList<>();
        for (long s = 0; s < 4; s++) calibration.add(List.of(image.apply(s)));
        Quantizer.Result q = Quantizer.quantize(model, calibration, QuantizeConfig.DEFAULT);
        long int8Convs = QuantizeMnistTest.count(q.module(), "nn.conv2d", "int32");
        assertTrue(int8Convs >= 50, "only " + int8Convs + " of ResNet-50's 53 convolutions were quantized");
        Outcome o = compare(model, q.module(), "resnet50", 4, s -> image.apply(10_000 + s));
        System.out.printf("light resnet50 int8 (%d int8 convs, KL, 4 calibration inputs): cosine with float mean %.5f min %.5f%n", int8Convs, o.meanCosine(), o.minCosine());
        assertTrue(o.minCosine() >= 0.99, "cosine similarity " + o.minCosine() + " < 0.99");
    }

    /** Over the inputs: top-1 agreement, how often float picks class 0, and the outputs' cosine similarity. */
    private record Outcome(int agree, int firstClass, double meanCosine, double minCosine) {}

    private static Outcome compare(IRModule model, IRModule quantized, String name, int n, LongFunction<NDArray> input) {
        Path f = ArtifactCompiler.compile(OptPipeline.optimize(model, 3), CompileOptions.host(3), tmp.resolve(name + "-f32")).dir();
        Path q = ArtifactCompiler.compile(OptPipeline.optimize(quantized, 3), CompileOptions.host(3), tmp.resolve(name + "-int8")).dir();
        int agree = 0, firstClass = 0;
        double sum = 0, min = 1;
        try (CompiledModel fm = CompiledModel.load(f); CompiledModel qm = CompiledModel.load(q)) {
            for (long s = 0; s < n; s++) {
                NDArray x = input.apply(s);
                NDArray want = fm.run(List.of(x)).getFirst(), got = qm.run(List.of(x)).getFirst();
                int a = QuantizeMnistTest.argmax(want);
                if (a == QuantizeMnistTest.argmax(got)) agree++;
                if (a == 0) firstClass++;
                double dot = 0, ww = 0, gg = 0;
                for (int i = 0; i < want.elementCount(); i++) {
                    dot += want.getDouble(i) * got.getDouble(i);
                    ww += want.getDouble(i) * want.getDouble(i);
                    gg += got.getDouble(i) * got.getDouble(i);
                }
                double cos = dot / Math.sqrt(ww * gg);
                sum += cos;
                min = Math.min(min, cos);
            }
        }
        return new Outcome(agree, firstClass, sum / n, min);
    }
}
