package dev.relayfarm.bench;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.MachinePeak;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Thread scaling, ours beside ONNX Runtime's (issue #18: "2-thread scaling of the big models ≥ 1.85× over 1 thread"):
 * per model, one artifact (untuned, -O3) and one ONNX Runtime model, each at 1 and at 2 threads, the four timed in one
 * {@link SideBySide#alternate} run (blocks of runs in turn, ONNX Runtime paused between blocks), so drift hits them
 * alike; scaling is the 1-thread median over the 2-thread median. Beside ours, the bound: an estimate of the most our
 * 1-thread kernels could scale on two threads with this machine's two-thread read bandwidth ({@link KernelProfiler.Profile#scalingBound},
 * from a 1-thread profile of the same artifact and {@link MachinePeak#readBandwidth}): a model whose weights stream
 * from memory cannot pass it, whatever its kernels do. Not a unit test: disabled unless asked for, and it needs an
 * idle machine.
 * <pre>
 * ./mvnw -q -o -pl tools test -Dtest=ThreadScalingBenchmark -Dsurefire.failIfNoSpecifiedTests=false -Drelayfarm.bench=true
 *     [-Drelayfarm.bench.models=inception_v1,resnet50] [-Drelayfarm.bench.runs=30]
 * </pre>
 * Default models: the ImageNet-sized ones of {@code ../shared/onnx/light} and mlsd.
 */
class ThreadScalingBenchmark {
    private static final List<String> BIG = List.of("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "vgg19", "zfnet512",
            "mlsd_tiny_320");

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void oneThreadAgainstTwo(@TempDir Path dir) throws IOException {
        List<Path> folders = Stream.of(OnnxTestData.models(), OnnxTestData.light()).flatMap(java.util.Optional::stream).toList();
        assumeTrue(!folders.isEmpty(), "../shared/onnx/models and ../shared/onnx/light not found: skipped");
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        int runs = Integer.getInteger("relayfarm.bench.runs", 30);
        String given = System.getProperty("relayfarm.bench.models", "");
        List<String> only = given.isBlank() ? BIG : List.of(given.split(","));
        Target target = Target.host();
        double read1 = MachinePeak.readBandwidth(1).orElseThrow(), read2 = MachinePeak.readBandwidth(2).orElseThrow();
        long cache = MachinePeak.lastLevelCacheBytes().orElse(32L << 20); // unknown: a large server's per-die L3
        System.out.printf(Locale.ROOT, "read bandwidth: 1 thread %.1f GB/s, 2 threads %.1f GB/s (%.2fx)%n", read1, read2, read2 / read1);
        System.out.printf("%-16s %10s %10s %8s %8s %10s %10s %8s%n", "model", "ours 1T", "ours 2T", "scaling", "bound", "ORT 1T", "ORT 2T", "scaling");
        for (Path model : BenchInputs.models(folders)) {
            String name = BenchInputs.modelName(model);
            if (!only.contains(name)) continue;
            try {
                BenchInputs in = BenchInputs.load(model, Map.of(), 42);
                IRModule optimized = Stages.optimize(Stages.importModel(ModelSource.read(in.onnx()), in.shapes()), 3, target);
                // the same artifact in two folders: two loaded libraries, so neither's thread pool is the other's
                Path one = dir.resolve(name + "-1"), two = dir.resolve(name + "-2");
                ArtifactCompiler.Artifact artifact = Stages.codegen(optimized, new CompileOptions(target, 3, Map.of()), one);
                Stages.codegen(optimized, new CompileOptions(target, 3, Map.of()), two);
                try (CompiledRunner ours1 = CompiledRunner.load(one, 1, "ours-1");
                     CompiledRunner ours2 = CompiledRunner.load(two, 2, "ours-2");
                     OrtRunner ort1 = OrtRunner.open(in.onnx(), 1);
                     OrtRunner ort2 = OrtRunner.open(in.onnx(), 2)) {
                    double[][] t = SideBySide.alternate(List.of(ours1, ours2, ort1, ort2), in.values(), 2, runs);
                    double[] m = new double[4];
                    for (int i = 0; i < 4; i++) m[i] = SideBySide.percentile(t[i], 0.5);
                    double bound = KernelProfiler.profile(name, artifact, ours1.model(), in.values(), new KernelProfiler.Options(1, 2, runs, Double.NaN, read1))
                            .scalingBound(2, read2, cache);
                    System.out.printf(Locale.ROOT, "%-16s %10.3f %10.3f %7.2fx %7.2fx %10.3f %10.3f %7.2fx%n", name, m[0], m[1], m[0] / m[1], bound, m[2], m[3],
                            m[2] / m[3]);
                    System.out.flush();
                }
            } catch (RuntimeException e) {
                System.out.println(name + " FAILED: " + e);
            }
        }
        System.out.printf("(medians of %d runs, ms, idle machine required; bound: ours 1T's kernels, each at most 2x faster and no faster than "
                + "its bytes, when they exceed the last-level cache, at the 2-thread read bandwidth)%n", runs);
    }
}
