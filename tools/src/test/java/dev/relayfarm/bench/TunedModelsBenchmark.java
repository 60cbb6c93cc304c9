package dev.relayfarm.bench;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.MeasureOptions;
import dev.relayfarm.tuning.measure.SandboxedRunner;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.ScheduleFile;
import dev.relayfarm.tuning.scheduler.ModelGuard;
import dev.relayfarm.tuning.scheduler.Tuner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Tuned against untuned against ONNX Runtime, per model (issue #15's table): every model of {@code ../shared/onnx/models}
 * and {@code ../shared/onnx/light} is tuned on this machine with a fixed budget ({@code relayc tune}'s library loop:
 * xgb, batches of 16, kernels measured with the benchmark's thread count, then its model check: the tuned configs that
 * did not make the whole model faster are rejected), compiled with what its records say beat the defaults
 * ({@code relayc compile --schedules}'s rule) and without, and the two artifacts and ONNX Runtime run in turn
 * on the same inputs in this process. Not a unit test: disabled unless asked for, and it needs an idle machine.
 * <pre>
 * ./mvnw -q -pl tools -am test -Dtest=TunedModelsBenchmark -Dsurefire.failIfNoSpecifiedTests=false -Drelayfarm.bench=true
 *     [-Drelayfarm.bench.budget=180] [-Drelayfarm.bench.models=squeezenet,resnet50] [-Drelayfarm.bench.records=DIR] [-Drelayfarm.bench.retune=false]
 * </pre>
 * {@code budget}: tuning seconds per model (default 180; the issue allows up to 20 minutes). Records are kept in
 * {@code records} (default {@code target/tuned-models}), the artifacts under its {@code artifacts/}; with
 * {@code retune=false} a model whose records file exists is not tuned again, so the table can be re-measured without
 * re-tuning. A model that fails is reported and the others go on. A model none of whose tuned configs applies (none
 * beat its default, or the model check rejected them all) has one artifact, timed once: its tuned time is its untuned
 * time. Latencies: the median of 50 runs (more for a model of under 40 ms: enough to time the untuned artifact for 2 s)
 * after 5 warm-up runs of each, 2 threads for our artifacts and ONNX Runtime alike.
 */
class TunedModelsBenchmark {
    private static final int THREADS = 2, WARMUP = 5, ITERATIONS = 50, CHECK_RUNS = 30;
    private static final double MIN_MS = 2000;

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void tunedAgainstUntunedAgainstOnnxRuntime() throws IOException {
        List<Path> folders = Stream.of(OnnxTestData.models(), OnnxTestData.light()).flatMap(java.util.Optional::stream).toList();
        assumeTrue(!folders.isEmpty(), "../shared/onnx/models and ../shared/onnx/light not found: skipped");
        CCompiler cc = CCompiler.host().orElse(null);
        assumeTrue(cc != null, "no C compiler");
        Duration budget = Duration.ofSeconds(Long.getLong("relayfarm.bench.budget", 180));
        Path recordsDir = Path.of(System.getProperty("relayfarm.bench.records", "target/tuned-models"));
        boolean retune = Boolean.parseBoolean(System.getProperty("relayfarm.bench.retune", "true"));
        List<String> only = List.of(System.getProperty("relayfarm.bench.models", "").split(",")).stream().filter(s -> !s.isBlank()).toList();
        Files.createDirectories(recordsDir);
        Target target = Target.host();
        RecordContext context = RecordContext.local(target, cc);
        SandboxedRunner runner = new SandboxedRunner(cc, MeasureOptions.DEFAULT.withThreads(THREADS));
        Tuner.Options options = new Tuner.Options("xgb", 16, 0, budget, 1, 64);

        List<Row> rows = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        System.out.println(Row.HEADER);
        for (Path model : BenchInputs.models(folders)) {
            String name = BenchInputs.modelName(model);
            if (!only.isEmpty() && !only.contains(name)) continue;
            try {
                Row row = measure(model, recordsDir, retune, target, runner, context, options);
                rows.add(row);
                System.out.println(row.line());
            } catch (RuntimeException e) {
                failed.add(name + ": " + e);
                System.out.println(name + " FAILED: " + e);
            }
            System.out.flush();
        }
        System.out.printf("%n%s%n", Row.HEADER);
        rows.forEach(r -> System.out.println(r.line()));
        System.out.printf(Locale.ROOT, "geometric means over %d models: tuned/untuned %.3fx, untuned/ORT %.3fx, tuned/ORT %.3fx; tuned slower than untuned: %s%n",
                rows.size(), geomean(rows, Row::tunedOverUntuned), geomean(rows, Row::untunedOverOrt), geomean(rows, Row::tunedOverOrt),
                rows.stream().filter(r -> r.tunedOverUntuned() > 1).map(r -> String.format(Locale.ROOT, "%s %.3fx", r.model(), r.tunedOverUntuned())).toList());
        failed.forEach(f -> System.out.println("failed: " + f));
        System.out.printf("(budget %d s per model, xgb, %d threads, median of at least %d runs and 2 s after %d warm-up, records in %s)%n", budget.toSeconds(), THREADS, ITERATIONS, WARMUP,
                recordsDir.toAbsolutePath());
    }

    /** One model: tuned (unless its records are reused), compiled both ways, and the three engines timed. */
    private static Row measure(Path model, Path recordsDir, boolean retune, Target target, SandboxedRunner runner, RecordContext context,
                               Tuner.Options options) {
        try {
            BenchInputs in = BenchInputs.load(model, Map.of(), 42);
            IRModule optimized = Stages.optimize(Stages.importModel(ModelSource.read(in.onnx()), in.shapes()), 3, target);
            List<TuningTask> tasks = Stages.tasks(optimized, target);
            Path records = recordsDir.resolve(in.model() + ".jsonl");
            int trials = -1;
            long tuneSeconds = 0;
            Path artifacts = recordsDir.resolve("artifacts");
            String check = "reused";
            if (retune || !Files.exists(records)) {
                Files.deleteIfExists(records);
                Tuner.Result r = new Tuner(runner, context, records, options, null).tune(tasks, Tuner.callsPerWorkload(optimized, tasks), List.of());
                trials = r.status().trials();
                tuneSeconds = r.status().elapsed().toSeconds();
                // relayc tune's model check, timed as the table is (2 threads) but in its own artifacts and runs
                try (ArtifactComparison timer = new ArtifactComparison(optimized, target, 3, THREADS, CHECK_RUNS, artifacts.resolve(in.model() + "-check"))) {
                    ModelGuard.Verdict v = ModelGuard.checkRecords(records, tasks, target, timer);
                    check = v.comparisons().isEmpty() ? "-" : v.rejected().isEmpty() ? "kept" : v.kept().isEmpty() ? "rejected" : "partly";
                    for (ModelGuard.Comparison c : v.comparisons()) {
                        System.out.printf(Locale.ROOT, "%s: model check with %d tuned workloads: %.3fx over all %d runs each, median round %.3fx, faster in %d of %d rounds%n",
                                in.model(), c.workloads().size(), c.ratio(), c.runs(), c.medianRound(), c.roundsWon(), c.roundRatios().size());
                    }
                }
            }
            Map<String, ScheduleConfig> tuned = Files.exists(records) ? ScheduleFile.choose(records, tasks, target, null) : Map.of();
            // no tuned config applies: the tuned artifact would be the untuned one, byte for byte, so it is not timed twice
            boolean same = tuned.isEmpty();
            try (CompiledRunner untunedRun = compile(optimized, target, Map.of(), artifacts.resolve(in.model() + "-untuned"));
                 CompiledRunner tunedOnly = same ? null : compile(optimized, target, tuned, artifacts.resolve(in.model() + "-tuned"));
                 OrtRunner ort = OrtRunner.open(in.onnx(), THREADS)) {
                CompiledRunner tunedRun = same ? untunedRun : tunedOnly;
                double diff = SideBySide.maxAbsDiff(tunedRun.run(in.values()), ort.run(in.values()), in.model());
                int runs = SideBySide.runsFor(untunedRun, in.values(), ITERATIONS, MIN_MS);
                double[][] t = SideBySide.alternate(same ? List.of(untunedRun, ort) : List.of(untunedRun, tunedRun, ort), in.values(), WARMUP, runs);
                double untunedMs = SideBySide.percentile(t[0], 0.5), ortMs = SideBySide.percentile(t[t.length - 1], 0.5);
                return new Row(in.model(), tasks.size(), tuned.size(), trials, tuneSeconds, check, untunedMs, same ? untunedMs : SideBySide.percentile(t[1], 0.5),
                        ortMs, diff);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }


    /** Compiles into {@code dir} (kept, replaced by the next run: the artifacts the table measured can be inspected). */
    private static CompiledRunner compile(IRModule optimized, Target target, Map<String, ScheduleConfig> configs, Path dir) {
        Stages.codegen(optimized, new CompileOptions(target, 3, configs), dir);
        return CompiledRunner.load(dir, THREADS, "relayfarm-c-" + dir.getFileName());
    }

    private static double geomean(List<Row> rows, java.util.function.ToDoubleFunction<Row> f) {
        return Math.exp(rows.stream().mapToDouble(r -> Math.log(f.applyAsDouble(r))).average().orElse(Double.NaN));
    }

    /** One model's line of the table; {@code trials} is -1 when its records were reused. */
    private record Row(String model, int workloads, int tunedWorkloads, int trials, long tuneSeconds, String check, double untunedMs, double tunedMs,
                       double ortMs, double maxAbsDiff) {
        static final String HEADER = String.format("%-22s %9s %7s %6s %8s %10s %10s %10s %9s %9s %9s %10s", "model", "workloads", "trials", "tune s",
                "check", "untuned ms", "tuned ms", "ORT ms", "tun/unt", "unt/ORT", "tun/ORT", "max|diff|");

        double tunedOverUntuned() {
            return tunedMs / untunedMs;
        }

        double untunedOverOrt() {
            return untunedMs / ortMs;
        }

        double tunedOverOrt() {
            return tunedMs / ortMs;
        }

        String line() {
            return String.format(Locale.ROOT, "%-22s %4d/%-4d %7s %6d %8s %10.3f %10.3f %10.3f %8.3fx %8.3fx %8.3fx %10.2e", model, tunedWorkloads, workloads,
                    trials < 0 ? "reused" : Integer.toString(trials), tuneSeconds, check, untunedMs, tunedMs, ortMs, tunedOverUntuned(), untunedOverOrt(),
                    tunedOverOrt(), maxAbsDiff);
        }
    }
}
