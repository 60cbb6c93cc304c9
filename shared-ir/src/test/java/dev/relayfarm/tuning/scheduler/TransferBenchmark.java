package dev.relayfarm.tuning.scheduler;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.kernel.template.DensePackTemplate;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.MeasureOptions;
import dev.relayfarm.tuning.measure.SandboxedRunner;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transfer on real timings (issue #15: a model tuned after another of similar layers reaches 90% of its final speed in
 * at most 30% of the trials it needs from scratch). Not a unit test: disabled unless asked for, and it needs an idle
 * machine.
 * <pre>
 * ./mvnw -q -o -pl shared-ir test -Dtest=TransferBenchmark -Drelayfarm.bench=true [-Drelayfarm.bench.trials=96] [-Drelayfarm.bench.seeds=1,2,3] [-Drelayfarm.bench.batch=1] [-Drelayfarm.bench.records=DIR]
 *     [-Drelayfarm.bench.reuse=true]
 * </pre>
 * Two three-layer MLPs with the same layer widths (256 → 512 → 512 → 256, each dense with bias and relu) at different
 * batch sizes (A: 16 rows, B: 8), so their workloads differ but their template ({@code dense_pack.x86}, 120 configs a
 * layer, whose knobs have the same values at both sizes) and good register tiles are alike. These layers are tuned
 * because the template's default leaves real headroom on them (the best configs 1.2–1.35× faster on two of the three);
 * on convolutions ({@code conv2d_NCHWc.x86}: 3x3 and 1x1 layers at 16x16 and 32x32 were tried) the defaults are within
 * a few percent of the best and the first configs the search measures already within 10% of it, so there is nothing for
 * transfer to save. B is tuned from scratch; A is tuned; then B again, with A's records as prior records (the
 * {@link Tuner}'s transfer: each of B's tasks
 * first measures the configs that beat their default on A's workloads of its template, the nearest workload's first).
 * Both B runs use the same seed, strategy (xgb), trial budget and batch, over the three layers of the template. The
 * batch is 1 config a round (besides the default): the model has a time once every layer has one, after at least
 * (layers − 1) × batch + 1 trials in either run, a floor that with larger batches would hide what transfer saves.
 * <p>Each B run is read from its records file in the order measured, as two curves, both against the same baseline (per
 * layer, the median of every measurement of its default in both B runs; each batch measures it again):
 * <ul>
 * <li><b>search</b>: the model's speed if every layer took the fastest config the search measured in the run's first t
 *     trials (the default left out: it is the template's hand-written starting point, not something found), defined once
 *     every layer has one. The target is 90% of the scratch run's final speed: the line, the way AutoTVM's
 *     transfer curves are read (best found vs trials).
 * <li><b>gain</b>: the same with the default counting as found; the target is 90% of the gain the scratch run found (time
 *     at most default − 0.9 × (default − final)). When the scratch run gained less than 5% this gain is within the
 *     noise, and the row says so rather than a ratio.
 * </ul>
 * Both curves only rise. Each seed is one draw of the searches' first configs, so the benchmark runs several seeds and
 * reports the median of their ratios (a seed where the run after A never reached the target counts as the worst case;
 * one whose curve was not read, as none).
 */
class TransferBenchmark {
    /** Read the curves again from the records a run with the same {@code records} folder left, instead of tuning. */
    private static final boolean REUSE = Boolean.getBoolean("relayfarm.bench.reuse");
    /** Below this the gain from scratch is within the noise of a measurement: no gain curve is read. */
    private static final double MIN_GAIN = 1.05;
    static final String A = mlp(16), B = mlp(8);

    /** dense 256→512, 512→512, 512→256, each with bias and relu, on a {@code batch}×256 input. */
    static String mlp(int batch) {
        return String.format(Locale.ROOT, """
                #[version = "0.0.5"]
                def @main(%%x: Tensor[(%d, 256), float32], %%w1: Tensor[(512, 256), float32], %%b1: Tensor[(512), float32],
                          %%w2: Tensor[(512, 512), float32], %%b2: Tensor[(512), float32], %%w3: Tensor[(256, 512), float32], %%b3: Tensor[(256), float32]) {
                  %%0 = nn.relu(nn.bias_add(nn.dense(%%x, %%w1, units=512), %%b1));
                  %%1 = nn.relu(nn.bias_add(nn.dense(%%0, %%w2, units=512), %%b2));
                  nn.relu(nn.bias_add(nn.dense(%%1, %%w3, units=256), %%b3))
                }
                """, batch);
    }

    /** After a trial: trials so far and the model's speedup over the common defaults (NaN while a layer has no value). */
    private record Point(int trials, double speedup) {}

    /** A run's records and what its curve is read against. */
    private record Run(List<TuningRecord> records, List<TuningTask> tasks, Map<String, Integer> calls) {}

    /** One curve's reading for one seed: trials to the target from scratch and after A (-1: never, 0: not read), both final speedups. */
    private record Reading(int fromScratch, int transferred, double scratchFinal, double transferFinal) {
        /** Trials after A over trials from scratch; NaN when not read, infinite when the run after A never got there. */
        double ratio() {
            if (fromScratch <= 0) return Double.NaN;
            return transferred > 0 ? (double) transferred / fromScratch : Double.POSITIVE_INFINITY;
        }
    }

    /** One seed's readings of both curves. */
    private record Outcome(long seed, Reading search, Reading gain) {}

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void tunedAfterASimilarModel(@TempDir Path tmp) throws IOException {
        CCompiler cc = CCompiler.host().orElse(null);
        assumeTrue(cc != null, "no C compiler");
        int trials = Integer.getInteger("relayfarm.bench.trials", 96);
        SandboxedRunner runner = new SandboxedRunner(cc, MeasureOptions.DEFAULT.withThreads(1));
        RecordContext context = RecordContext.local(Target.host(), cc);
        // one seed is one draw of the searches' first configs: a lucky scratch run reaches its plateau early, an unlucky
        // one late, so the ratio is read over several seeds (their median), each seed's run printed in full
        List<Long> seeds = Arrays.stream(System.getProperty("relayfarm.bench.seeds", "1").split(",")).map(String::trim).map(Long::parseLong).toList();
        List<Outcome> outcomes = new ArrayList<>();
        for (long seed : seeds) {
            // the three runs' records kept where asked (to see what transferred and what each run found), else thrown away
            Path dir = Files.createDirectories(Path.of(System.getProperty("relayfarm.bench.records", tmp.toString()), "seed-" + seed));
            Tuner.Options options = new Tuner.Options("xgb", Integer.getInteger("relayfarm.bench.batch", 1), trials, null, seed, trials);
            outcomes.add(run(seed, dir, runner, context, options));
        }
        System.out.printf("%n%d trials per run; trials to 90%% of the scratch run's final speed (search) and gain (gain)%n", trials);
        System.out.printf(Locale.ROOT, "%-6s %14s %14s %8s %14s %14s %14s %8s%n", "seed", "search scratch", "search after A", "ratio", "final scratch",
                "gain scratch", "gain after A", "ratio");
        for (Outcome o : outcomes) {
            System.out.printf(Locale.ROOT, "%-6d %14s %14s %8s %13.3fx %14s %14s %8s%n", o.seed(), text(o.search().fromScratch()), text(o.search().transferred()),
                    percent(o.search().ratio()), o.search().scratchFinal(), text(o.gain().fromScratch()), text(o.gain().transferred()), percent(o.gain().ratio()));
        }
        List<Reading> search = outcomes.stream().map(Outcome::search).toList(), gain = outcomes.stream().map(Outcome::gain).toList();
        System.out.printf(Locale.ROOT, "median ratio: search %s over %d seeds, gain %s over %d (target <= 30%%)%n", percent(median(search)),
                search.stream().filter(r -> !Double.isNaN(r.ratio())).count(), percent(median(gain)), gain.stream().filter(r -> !Double.isNaN(r.ratio())).count());
    }

    /** The median of the readings' ratios over the seeds where the curve was read (NaN when none was). */
    private static double median(List<Reading> readings) {
        List<Double> read = readings.stream().map(Reading::ratio).filter(r -> !Double.isNaN(r)).toList();
        return read.isEmpty() ? Double.NaN : TaskScheduler.median(read);
    }

    private static Outcome run(long seed, Path dir, SandboxedRunner runner, RecordContext context, Tuner.Options options) throws IOException {
        // records are appended: an earlier run's in the same folder would count as this one's, unless it is to be re-read
        if (!REUSE) for (String f : List.of("b-scratch.jsonl", "a.jsonl", "b-transfer.jsonl")) Files.deleteIfExists(dir.resolve(f));
        System.out.printf("%n== seed %d ==%n", seed);
        Run scratchRun = tune(B, runner, context, options, dir.resolve("b-scratch.jsonl"), List.of());
        tune(A, runner, context, options, dir.resolve("a.jsonl"), List.of());
        List<TuningRecord> fromA = RecordFile.read(dir.resolve("a.jsonl"));
        Run transferRun = tune(B, runner, context, options, dir.resolve("b-transfer.jsonl"), fromA);
        // one baseline for both: each layer's default, the median over both runs' batches
        Map<String, Double> defaults = new HashMap<>();
        for (TuningTask t : scratchRun.tasks()) {
            List<TuningRecord> both = Stream.concat(scratchRun.records().stream(), transferRun.records().stream()).filter(r -> r.workloadKey().equals(t.key())).toList();
            defaults.put(t.key(), Tuner.defaultMedian(both));
        }
        List<Point> searchScratch = curve(scratchRun, defaults, false), searchTransfer = curve(transferRun, defaults, false);
        List<Point> gainScratch = curve(scratchRun, defaults, true), gainTransfer = curve(transferRun, defaults, true);
        System.out.printf("%n%-6s %22s %22s %22s %22s%n", "batch", "search from scratch", "search after A", "gain from scratch", "gain after A");
        int batch = options.batch();
        for (int i = batch - 1; i < Math.max(searchScratch.size(), searchTransfer.size()); i += batch) {
            System.out.printf(Locale.ROOT, "%-6d %22s %22s %22s %22s%n", (i + 1) / batch, point(searchScratch, i), point(searchTransfer, i), point(gainScratch, i),
                    point(gainTransfer, i));
        }
        defaults.forEach((key, us) -> System.out.printf(Locale.ROOT, "  default of %s: %.1f us (median of both runs)%n", key, us));
        System.out.printf(Locale.ROOT, "A's records: %d, of which %d beat their default%n", fromA.size(), fromA.stream().filter(TuningRecord::fasterThanDefault).count());
        // search: 90% of the final speed the search found from scratch
        double searchFinal = searchScratch.getLast().speedup();
        // a layer the scratch run never measured a config of leaves no final speed: the seed is not read
        Reading search = !Double.isFinite(searchFinal) ? new Reading(0, 0, searchFinal, searchTransfer.getLast().speedup())
                : new Reading(reached(searchScratch, 0.9 * searchFinal), reached(searchTransfer, 0.9 * searchFinal), searchFinal, searchTransfer.getLast().speedup());
        // gain: 90% of the gain, time <= default - 0.9 (default - final), i.e. 1/speedup <= 1 - 0.9 (1 - 1/final); not read
        // when the gain is within the noise (every run would "reach" it at its first complete estimate)
        double gainFinal = gainScratch.getLast().speedup();
        double gainTarget = 1 / (1 - 0.9 * (1 - 1 / gainFinal));
        Reading gain = !(gainFinal >= MIN_GAIN) ? new Reading(0, 0, gainFinal, gainTransfer.getLast().speedup())
                : new Reading(reached(gainScratch, gainTarget), reached(gainTransfer, gainTarget), gainFinal, gainTransfer.getLast().speedup());
        System.out.printf(Locale.ROOT, "search: final speed %.3fx of the defaults; 90%% (%.3fx) from scratch from trial %s on, after A from trial %s on%n",
                searchFinal, 0.9 * searchFinal, text(search.fromScratch()), text(search.transferred()));
        System.out.printf(Locale.ROOT, "gain: final speedup %.3fx; 90%% of it (%.3fx) from scratch from trial %s on, after A from trial %s on%n",
                gainFinal, gainTarget, text(gain.fromScratch()), text(gain.transferred()));
        return new Outcome(seed, search, gain);
    }

    private static Run tune(String relay, SandboxedRunner runner, RecordContext context, Tuner.Options options, Path records,
            List<TuningRecord> prior) throws IOException {
        IRModule optimized = TuningModels.optimized(relay, Target.host());
        // the template's layers only: whatever else the module holds is not what is being compared
        List<TuningTask> tasks = Stages.tasks(optimized, Target.host()).stream().filter(t -> t.template().equals(DensePackTemplate.NAME)).toList();
        System.out.printf("%s: %s%n", records.getFileName(), tasks.stream().map(t -> t.key() + " (" + t.space().size() + " configs)").toList());
        if (tasks.size() != 3) throw new IllegalStateException("expected 3 " + DensePackTemplate.NAME + " layers, found " + tasks.size());
        Map<String, Integer> calls = Tuner.callsPerWorkload(optimized, tasks);
        if (REUSE && Files.exists(records)) return new Run(RecordFile.read(records), tasks, calls);
        Tuner.Result result = new Tuner(runner, context, records, options, null).tune(tasks, calls, prior);
        // the headroom: what each layer's best found beats its default by
        for (TaskScheduler.Progress p : result.status().tasks()) {
            System.out.printf(Locale.ROOT, "  %-60s %3d trials  default %8.1f us  best %8.1f us  %.2fx%n", p.task().key(), p.trials(), p.defaultUs(), p.bestUs(), p.speedup());
        }
        return new Run(RecordFile.read(records), tasks, calls);
    }

    /**
     * After each trial of {@code run} (its records in the order measured; a measurement of a default is not a trial, a
     * failed one is), the model's speedup over {@code defaults} if each layer took the fastest config measured so far:
     * with {@code withDefault} its default counts as measured from the start, else a layer has no time (and the model
     * no speedup, NaN) until the search measured a config of it.
     */
    private static List<Point> curve(Run run, Map<String, Double> defaults, boolean withDefault) {
        Map<String, ScheduleConfig> defaultConfigs = new HashMap<>();
        for (TuningTask t : run.tasks()) defaultConfigs.put(t.key(), t.defaultConfig());
        Map<String, Double> best = withDefault ? new HashMap<>(defaults) : new HashMap<>();
        double defaultModel = 0;
        for (TuningTask t : run.tasks()) defaultModel += run.calls().get(t.key()) * defaults.get(t.key());
        List<Point> curve = new ArrayList<>();
        for (TuningRecord r : run.records()) {
            if (!defaults.containsKey(r.workloadKey()) || r.config().equals(defaultConfigs.get(r.workloadKey()))) continue;
            if (r.ok()) best.merge(r.workloadKey(), r.costUs(), Math::min);
            double model = 0;
            for (TuningTask t : run.tasks()) model += run.calls().get(t.key()) * best.getOrDefault(t.key(), Double.NaN);
            curve.add(new Point(curve.size() + 1, defaultModel / model));
        }
        return curve;
    }

    /** The first trial at which the (rising) curve is at {@code target} or above, or -1. */
    private static int reached(List<Point> curve, double target) {
        for (Point p : curve) if (p.speedup() >= target) return p.trials();
        return -1;
    }

    private static String point(List<Point> curve, int i) {
        if (i >= curve.size()) return "";
        Point p = curve.get(i);
        return Double.isNaN(p.speedup()) ? String.format(Locale.ROOT, "%4d trials %7s", p.trials(), "-")
                : String.format(Locale.ROOT, "%4d trials %7.3fx", p.trials(), p.speedup());
    }

    private static String text(int trials) {
        return trials < 0 ? "never" : trials == 0 ? "-" : Integer.toString(trials);
    }

    private static String percent(double ratio) {
        return Double.isNaN(ratio) ? "n/a" : Double.isInfinite(ratio) ? "inf" : String.format(Locale.ROOT, "%.0f%%", 100 * ratio);
    }
}
