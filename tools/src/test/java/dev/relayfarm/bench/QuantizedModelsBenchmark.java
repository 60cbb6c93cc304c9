package dev.relayfarm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Issue 21's int8 latency table: our float32 and int8 artifacts against ONNX Runtime on the float model and on the
 * same model quantized with our decisions, exported as QDQ ({@link dev.relayfarm.quantize.qdq.QdqExporter}: ORT's
 * Python quantization tools are not available here, and exporting ours makes both engines run one int8 model), for
 * mnist8, ppocr_cls and the light ResNet-50 ({@link QdqCase}; a model whose file is absent is left out).
 * Before timing, ORT's optimized graph of the QDQ model must run every conv we quantized as a QLinearConv (asserted),
 * and each int8 engine is checked against our float artifact: top-1 agreement on the checking inputs, or for
 * ResNet-50 (alike logits: its weights are constants) the lowest cosine similarity.
 * Latency: the median of at least 30 runs (more for a small model: 1 s of our int8 artifact) after 5 warm-up runs,
 * the four engines alternating in rounds in this process ({@link SideBySide#alternate}), at 2 threads and at 1.
 * Not a unit test: disabled unless asked for, and it needs an idle machine.
 * <pre>
 * ./mvnw -o -q test -pl shared-ir,tools -Dtest=QuantizedModelsBenchmark -Dsurefire.failIfNoSpecifiedTests=false -Drelayfarm.bench=true
 *     [-Drelayfarm.bench.models=mnist8,ppocr_cls]
 * </pre>
 * The QDQ models and artifacts stay in {@code tools/target/quantized-models}.
 */
class QuantizedModelsBenchmark {
    private static final int WARMUP = 5, MIN_RUNS = 30;
    private static final double MIN_MS = 1000;

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void int8AgainstFloatAgainstOnnxRuntimeQdq() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        List<String> only = List.of(System.getProperty("relayfarm.bench.models", "").split(",")).stream().filter(s -> !s.isBlank()).toList();
        List<QdqCase> cases = QdqCase.available().stream().filter(c -> only.isEmpty() || only.contains(c.name())).toList();
        assumeTrue(!cases.isEmpty(), "none of mnist8, ppocr_cls, light_resnet50 found: skipped");
        Path dir = Path.of("target/quantized-models");
        List<String> rows = new ArrayList<>();
        System.out.println(HEADER);
        for (QdqCase c : cases) {
            long t0 = System.nanoTime();
            QdqCase.Prepared p = c.prepare(dir);
            Map<String, Integer> kernels = QdqCase.ortKernels(p.qdq(), 2, dir.resolve(c.name() + "-qdq-ort-optimized.onnx"));
            System.out.printf(Locale.ROOT, "%s: %d convs and %d Gemm/MatMul quantized, %d conv outputs calibrated for the export (%.0f s); ORT's optimized QDQ graph: %s%s%n",
                    c.name(), p.exported().quantizedConvs(), p.exported().quantizedMatMuls(), p.exported().calibratedOutputs().size(), (System.nanoTime() - t0) / 1e9, kernels,
                    p.exported().leftFloat().isEmpty() ? "" : "; float in the export, integer in ours: " + p.exported().leftFloat());
            assertEquals(p.exported().quantizedConvs(), QdqCase.int8Convs(kernels), c.name() + ": ORT should run every quantized conv as QLinearConv: " + kernels);
            Path f32 = compile(p.floatModule(), dir.resolve(c.name() + "-f32"));
            Path int8 = compile(p.quantized().module(), dir.resolve(c.name() + "-int8"));
            String agreement = agreement(c, p, f32, int8);
            NDArray x = c.check().apply(10_000);
            for (int threads : new int[] {2, 1}) {
                try (CompiledRunner oursF = CompiledRunner.load(f32, threads, "ours-f32"); CompiledRunner oursQ = CompiledRunner.load(int8, threads, "ours-int8");
                     OrtRunner ortF = OrtRunner.open(c.onnx(), threads); OrtRunner ortQ = OrtRunner.open(p.qdq(), threads)) {
                    List<NDArray> in = List.of(x);
                    int runs = SideBySide.runsFor(oursQ, in, MIN_RUNS, MIN_MS);
                    double[][] t = SideBySide.alternate(List.of(oursF, oursQ, ortF, ortQ), in, WARMUP, runs);
                    double[] ms = new double[4];
                    for (int i = 0; i < 4; i++) ms[i] = SideBySide.percentile(t[i], 0.5);
                    String row = String.format(Locale.ROOT, "%-10s %7d %12.3f %12.3f %12.3f %12.3f %9.2fx %6d  %s", c.name(), threads, ms[0], ms[1], ms[2], ms[3],
                            ms[1] / ms[3], runs, agreement);
                    rows.add(row);
                    System.out.println(row);
                }
            }
            System.out.flush();
        }
        System.out.printf("%n%s%n", HEADER);
        rows.forEach(System.out::println);
        System.out.println("(median ms of the runs shown, 5 warm-up each, engines alternating in rounds; agreement against our float32 artifact)");
    }

    private static final String HEADER = String.format("%-10s %7s %12s %12s %12s %12s %10s %6s  %s", "model", "threads", "ours f32 ms", "ours int8 ms",
            "ORT f32 ms", "ORT QDQ ms", "ours8/ORT8", "runs", "agreement with float (ours int8, ORT QDQ)");

    private static Path compile(IRModule module, Path dir) {
        return ArtifactCompiler.compile(OptPipeline.optimize(module, 3), CompileOptions.host(3), dir).dir();
    }

    /** Top-1 agreement (or lowest cosine) of our int8 artifact and ORT on the QDQ model with our float artifact. */
    private static String agreement(QdqCase c, QdqCase.Prepared p, Path f32, Path int8) {
        int oursAgree = 0, ortAgree = 0;
        double oursCos = 1, ortCos = 1;
        try (CompiledRunner f = CompiledRunner.load(f32, 2, "f"); CompiledRunner q = CompiledRunner.load(int8, 2, "q"); OrtRunner ort = OrtRunner.open(p.qdq(), 2)) {
            for (long s = 10_000; s < 10_000 + c.checkCount(); s++) {
                List<NDArray> in = List.of(c.check().apply(s));
                NDArray want = f.run(in).getFirst(), ours = q.run(in).getFirst(), theirs = ort.run(in).getFirst();
                if (QdqOrtKernelsTest.argmax(want) == QdqOrtKernelsTest.argmax(ours)) oursAgree++;
                if (QdqOrtKernelsTest.argmax(want) == QdqOrtKernelsTest.argmax(theirs)) ortAgree++;
                oursCos = Math.min(oursCos, cosine(want, ours));
                ortCos = Math.min(ortCos, cosine(want, theirs));
            }
        }
        return c.cosine() ? String.format(Locale.ROOT, "cosine min %.6f, %.6f over %d", oursCos, ortCos, c.checkCount())
                : String.format(Locale.ROOT, "top-1 %d/%d, %d/%d", oursAgree, c.checkCount(), ortAgree, c.checkCount());
    }

    private static double cosine(NDArray a, NDArray b) {
        double dot = 0, aa = 0, bb = 0;
        for (int i = 0; i < a.elementCount(); i++) {
            dot += a.getDouble(i) * b.getDouble(i);
            aa += a.getDouble(i) * a.getDouble(i);
            bb += b.getDouble(i) * b.getDouble(i);
        }
        return dot / Math.sqrt(aa * bb);
    }
}
