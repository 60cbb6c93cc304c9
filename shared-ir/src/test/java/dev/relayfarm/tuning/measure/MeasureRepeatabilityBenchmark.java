package dev.relayfarm.tuning.measure;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Timing repeatability (issue #15: the same config measured 10 times has a coefficient of variation below 5% on an
 * idle machine). Not a unit test: disabled unless asked for.
 * <pre>
 * ./mvnw -q -o -pl shared-ir test -Dtest=MeasureRepeatabilityBenchmark -Drelayfarm.bench=true [-Drelayfarm.bench.threads=1] [-Drelayfarm.bench.flush=true]
 * </pre>
 * Measures the default config of a conv2d + relu task (1×32×28×28, 3×3 → 64 channels) in 10 separate batches with
 * {@link MeasureOptions#DEFAULT} (3 warm-up calls, {@code number} raised to 20 ms repeats twice in a row, the median of
 * 5 repeats, the cache flushed before each), and prints each batch's median and within-batch cv, then the cv of the
 * 10 medians. Pinning: run Maven under {@code taskset -c N} (children inherit the affinity) on a machine with a core
 * to spare.
 */
class MeasureRepeatabilityBenchmark {
    static final String CONV = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(1, 32, 28, 28), float32], %w: Tensor[(64, 32, 3, 3), float32]) {
              nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3]))
            }
            """;

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void sameConfigTenTimes() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        int threads = Integer.getInteger("relayfarm.bench.threads", 1);
        boolean flush = Boolean.parseBoolean(System.getProperty("relayfarm.bench.flush", "true"));
        MeasureOptions options = MeasureOptions.DEFAULT.withThreads(threads).withFlushCache(flush);
        TuningTask task = TuningModels.task(CONV, "nn.contrib_conv2d");
        SandboxedRunner runner = new SandboxedRunner(CCompiler.host().orElseThrow(), options);
        System.out.printf("task %s, config %s, %d thread(s), flush %s, rlimits via %s%n", task.key(), task.defaultConfig().toJson(), threads, flush,
                Sandbox.limitMechanism());
        List<Double> medians = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Measurement.Cost c = (Measurement.Cost) runner.measureWithBaseline(task, List.of()).baseline().outcome();
            medians.add(c.medianUs());
            System.out.printf("run %2d: median %10.2f µs  cv %5.2f%%  number %d × repeat %d%n", i + 1, c.medianUs(), 100 * c.cv(), c.number(), c.repeat());
        }
        double mean = medians.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
        double ss = medians.stream().mapToDouble(m -> (m - mean) * (m - mean)).sum();
        double cv = Math.sqrt(ss / (medians.size() - 1)) / mean;
        System.out.printf("10 runs: mean of medians %.2f µs, min %.2f, max %.2f, cv %.2f%% (target < 5%% on an idle machine)%n", mean,
                medians.stream().mapToDouble(Double::doubleValue).min().orElseThrow(), medians.stream().mapToDouble(Double::doubleValue).max().orElseThrow(), 100 * cv);
    }
}
