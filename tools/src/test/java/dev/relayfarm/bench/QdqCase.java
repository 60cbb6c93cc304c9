package dev.relayfarm.bench;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.quantize.Calibration;
import dev.relayfarm.quantize.DigitImages;
import dev.relayfarm.quantize.QuantizeConfig;
import dev.relayfarm.quantize.Quantizer;
import dev.relayfarm.quantize.TextLineImages;
import dev.relayfarm.quantize.qdq.QdqExporter;
import dev.relayfarm.types.TypeInference;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.LongFunction;

/**
 * One model of issue 21's int8 comparison with ONNX Runtime, quantized as the shared-ir accuracy tests quantize it
 * ({@code QuantizeMnistTest}, {@code QuantizeClassifierTest}: the same seeded calibration inputs, all activations 8-bit
 * — ppocr_cls without the classifier test's mixed precision, since QDQ at opset 13 has no 16-bit tensors), and
 * {@link #prepare}d: imported, quantized by our quantizer, and exported with the same decisions as a QDQ model for ORT.
 *
 * @param name        the table's name
 * @param onnx        the float model
 * @param shapes      input shapes bound at import (ppocr_cls's dynamic dims)
 * @param config      our quantizer's config
 * @param calibration seed -> calibration input, for seeds 0 .. calibrationCount - 1
 * @param check       seed -> checking input, for seeds 10,000 .. 10,000 + checkCount - 1
 * @param cosine      whether agreement is reported as cosine similarity (the light ResNet-50's alike logits) instead of top-1
 */
record QdqCase(String name, Path onnx, Map<String, List<Long>> shapes, QuantizeConfig config, LongFunction<NDArray> calibration, int calibrationCount,
               LongFunction<NDArray> check, int checkCount, boolean cosine) {

    /** The three models where their files are (and, for ppocr_cls, where this JDK can draw text); the others are left out. */
    static List<QdqCase> available() {
        List<QdqCase> out = new ArrayList<>();
        Optional<Path> models = OnnxTestData.models(), light = OnnxTestData.light();
        models.map(d -> d.resolve("mnist8_cntk/model.onnx")).filter(Files::isRegularFile).ifPresent(f -> out.add(new QdqCase("mnist8", f, Map.of(),
                // QuantizeMnistTest's default case: KL, the first conv float, digit-like strokes; calibrated on seeds 1-64
                // (its seed 0 is the model's shipped input, which this benchmark does not read)
                QuantizeConfig.DEFAULT, s -> DigitImages.image(true, s + 1), 64, s -> DigitImages.image(true, s), 200, false)));
        if (TextLineImages.available()) {
            models.map(d -> d.resolve("ppocr_cls_mobilenetv3/model.onnx")).filter(Files::isRegularFile).ifPresent(f -> out.add(new QdqCase("ppocr_cls", f,
                    Map.of("x", List.of(1L, 3L, (long) TextLineImages.HEIGHT, (long) TextLineImages.WIDTH)),
                    QuantizeConfig.DEFAULT.withCalibration(Calibration.Mode.PERCENTILE), TextLineImages::image, 64, TextLineImages::image, 200, false)));
        }
        light.map(d -> d.resolve("light_resnet50.onnx")).filter(Files::isRegularFile).ifPresent(f -> out.add(new QdqCase("resnet50", f, Map.of(),
                QuantizeConfig.DEFAULT, QdqCase::uniformImage, 4, QdqCase::uniformImage, 4, true)));
        return out;
    }

    /** QuantizeClassifierTest's ResNet-50 input: uniform [0, 1), seeded. */
    private static NDArray uniformImage(long seed) {
        Random r = new Random(seed);
        float[] v = new float[3 * 224 * 224];
        for (int i = 0; i < v.length; i++) v[i] = r.nextFloat();
        return NDArray.wrap(DType.FLOAT32, new int[] {1, 3, 224, 224}, v);
    }

    /** The float module, our quantization of it, the QDQ export and where it was written. */
    record Prepared(QdqCase model, IRModule floatModule, Quantizer.Result quantized, QdqExporter.Result exported, Path qdq) {}

    /** Imports, quantizes and exports; the QDQ model is written to {@code dir/NAME-qdq.onnx}. */
    Prepared prepare(Path dir) {
        try {
            ModelProto proto = OnnxModels.read(onnx);
            ImportOptions options = ImportOptions.DEFAULT.withInputShapes(shapes);
            Path base = onnx.toAbsolutePath().getParent();
            IRModule module = TypeInference.infer(OnnxImporter.importModel(proto, onnx.getFileName().toString(), base, options)).module();
            List<List<NDArray>> inputs = new ArrayList<>();
            for (long s = 0; s < calibrationCount; s++) inputs.add(List.of(calibration.apply(s)));
            Quantizer.Result q = Quantizer.quantize(module, inputs, config);
            QdqExporter.Result e = QdqExporter.export(proto, base, options, q, inputs, config);
            Files.createDirectories(dir);
            Path file = dir.resolve(name + "-qdq.onnx");
            Files.write(file, e.model().toByteArray());
            return new Prepared(this, module, q, e, file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The operators of the graph ORT runs for {@code model} with {@code threads} threads, counted ("domain:op" outside the default domain). */
    static Map<String, Integer> ortKernels(Path model, int threads, Path dump) {
        OrtRunner.writeOptimized(model, threads, dump);
        Map<String, Integer> ops = new TreeMap<>();
        for (NodeProto n : OnnxModels.read(dump).getGraph().getNodeList()) {
            ops.merge(n.getDomain().isEmpty() ? n.getOpType() : n.getDomain() + ":" + n.getOpType(), 1, Integer::sum);
        }
        return ops;
    }

    /** ORT's int8 convolutions among {@code kernels}: QLinearConv, in whichever domain or layout its optimizer put it. */
    static int int8Convs(Map<String, Integer> kernels) {
        return kernels.entrySet().stream().filter(e -> e.getKey().endsWith("QLinearConv") || e.getKey().endsWith("ConvInteger"))
                .mapToInt(Map.Entry::getValue).sum();
    }

    /** ORT's int8 matrix products among {@code kernels}. */
    static int int8MatMuls(Map<String, Integer> kernels) {
        return kernels.entrySet().stream().filter(e -> e.getKey().endsWith("QLinearMatMul") || e.getKey().endsWith("MatMulInteger")
                || e.getKey().endsWith("MatMulIntegerToFloat") || e.getKey().endsWith("QGemm")).mapToInt(Map.Entry::getValue).sum();
    }
}
