package dev.relayfarm.tuning.scheduler;

import dev.relayfarm.compile.GraphBuilder;
import dev.relayfarm.compile.GraphPlan;
import dev.relayfarm.compile.Step;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.BaselineFailedException;
import dev.relayfarm.tuning.measure.BatchMeasurer;
import dev.relayfarm.tuning.measure.MeasuredBatch;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.tuning.record.WorkloadDistance;
import dev.relayfarm.tuning.search.CostModels;
import dev.relayfarm.tuning.search.CostSample;
import dev.relayfarm.tuning.search.EarlyStopping;
import dev.relayfarm.tuning.search.ModelGuidedSearch;
import dev.relayfarm.tuning.search.SearchStrategies;
import dev.relayfarm.tuning.search.SearchStrategy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Tunes a model's tasks in one process (what {@code relayc tune} runs; the farm's tuner workers distribute the same
 * loop): the {@link TaskScheduler} picks a task, its {@link SearchStrategy} proposes a batch, the sandboxed runner
 * measures it with the task's default in the same batch, every measurement is appended to the records file as it
 * comes (a killed tuner loses at most the batch in flight), and the strategy and the scheduler learn from the results.
 * It stops when the budget (trials or wall-clock time) is spent or every task's space is exhausted or its search has
 * stopped improving. Records of an earlier run ({@link #tune}'s {@code prior}) resume it: their configs are never
 * proposed again and their costs count. Prior records of other workloads transfer: a task's first rounds measure the
 * configs that beat their default on the nearest other workloads of its template ({@link #transferred}, at least
 * {@link #TRANSFERRED}), before its search starts;
 * and with the model-guided search, a task's cost model starts from what the run measured on the tasks before it
 * (the features are of the loop nest, not of the knobs, so they carry across workloads).
 */
public final class Tuner {
    /**
     * Transferred configs measured first per task (at least a round's worth): enough that one of them is the nearest
     * workload's best, not only its luckiest measurement.
     */
    static final int TRANSFERRED = 4;
    /**
     * @param strategy  {@link SearchStrategies#NAMES}
     * @param batch     configs per round (besides the default measured with them)
     * @param trials    the budget in measured configs, or 0 for none
     * @param time      the budget in wall-clock time, or null for none (at least one of the two is set)
     * @param patience  rounds end for a task after this many trials without improvement
     */
    public record Options(String strategy, int batch, int trials, Duration time, long seed, int patience) {
        public Options {
            if (!SearchStrategies.NAMES.contains(strategy)) throw new IllegalArgumentException("unknown strategy '" + strategy + "' (available: "
                    + String.join(", ", SearchStrategies.NAMES) + ")");
            if (batch < 1) throw new IllegalArgumentException("a round measures at least 1 config, got " + batch);
            if (trials < 0) throw new IllegalArgumentException("the trial budget cannot be negative, got " + trials);
            if (trials == 0 && time == null) throw new IllegalArgumentException("give a budget: trials or time");
            if (patience < 1) throw new IllegalArgumentException("patience must be at least 1 trial, got " + patience);
        }
    }

    /** Told after every round: the task, what the batch measured, and where the whole run stands. */
    public interface Listener {
        void afterRound(TuningTask task, MeasuredBatch batch, Status status);
    }

    /** Where a run stands: trials so far, time so far, the budget, and the scheduler's view of every task. */
    public record Status(int trials, Duration elapsed, Options options, List<TaskScheduler.Progress> tasks, double defaultModelUs, double modelUs) {
        /** The estimated time left: what is left of the time budget, or of the trial budget at the pace so far; null when unknown. */
        public Duration eta() {
            Duration byTime = options.time() == null ? null : options.time().minus(elapsed);
            Duration byTrials = options.trials() == 0 || trials == 0 ? null
                    : elapsed.multipliedBy(Math.max(0, options.trials() - trials)).dividedBy(trials);
            if (byTime == null) return byTrials;
            if (byTrials == null) return byTime;
            return byTime.compareTo(byTrials) < 0 ? byTime : byTrials;
        }
    }

    /** What a run found: per task its progress (default and best cost, trials) and why tasks stopped early. */
    public record Result(Status status, Map<String, String> notes) {}

    private final BatchMeasurer runner;
    private final RecordContext context;
    private final Path records;
    private final Options options;
    private final Listener listener;

    /** {@code records}: where every measurement is appended (JSON lines); null to keep none. */
    public Tuner(BatchMeasurer runner, RecordContext context, Path records, Options options, Listener listener) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.context = Objects.requireNonNull(context, "context");
        this.records = records;
        this.options = Objects.requireNonNull(options, "options");
        this.listener = listener != null ? listener : (t, b, s) -> {};
    }

    /**
     * Tunes {@code tasks}, weighting each by how often the model calls it ({@code calls}: {@link #callsPerWorkload}).
     * {@code prior}: records of earlier runs; those measured in this context (same target, device class and
     * compiler) seed the searches and the scheduler, others are ignored.
     */
    public Result tune(List<TuningTask> tasks, Map<String, Integer> calls, List<TuningRecord> prior) {
        Instant start = Instant.now();
        TaskScheduler scheduler = new TaskScheduler(tasks, calls);
        Map<String, SearchStrategy> searches = new LinkedHashMap<>();
        Map<String, List<Measurement>> resumed = new HashMap<>();
        Map<String, List<ScheduleConfig>> transfer = new HashMap<>();
        Map<String, String> notes = new LinkedHashMap<>();
        EarlyStopping stop = new EarlyStopping(options.patience());
        for (TuningTask t : tasks) {
            List<Measurement> mine = resume(t, scheduler, prior);
            if (mine.isEmpty()) transfer.put(t.key(), new ArrayList<>(transferred(t, prior, context, Math.max(options.batch(), TRANSFERRED))));
            else resumed.put(t.key(), mine);
        }
        int trials = 0;
        int measured = 0; // candidates and defaults: what the time per measurement is averaged over
        Map<String, Integer> baselineFailures = new HashMap<>();
        while (true) {
            Duration elapsed = Duration.between(start, Instant.now());
            if (options.time() != null && elapsed.compareTo(options.time()) >= 0) break;
            if (options.trials() > 0 && trials >= options.trials()) break;
            Optional<TuningTask> next = scheduler.next();
            if (next.isEmpty()) break;
            TuningTask task = next.get();
            SearchStrategy search = searches.computeIfAbsent(task.key(), k -> search(task, tasks.indexOf(task), searches, resumed.getOrDefault(k, List.of())));
            if (search.exhausted() || stop.shouldStop(search.history())) {
                notes.put(task.key(), search.exhausted() ? "space exhausted" : "no improvement in " + options.patience() + " trials");
                scheduler.finish(task);
                continue;
            }
            int size = options.trials() > 0 ? Math.min(options.batch(), options.trials() - trials) : options.batch();
            if (options.time() != null && measured > 0) {
                // a round must not run far past the time budget: at the pace so far, only what fits (the default included)
                double perMeasurement = elapsed.toNanos() / (double) measured;
                long fits = (long) (options.time().minus(elapsed).toNanos() / perMeasurement) - 1;
                size = (int) Math.max(1, Math.min(size, fits));
            }
            // transferred configs first, round by round (off the list once measured), then the search
            List<ScheduleConfig> pending = transfer.getOrDefault(task.key(), List.of());
            int taken = Math.min(size, pending.size());
            List<ScheduleConfig> configs = new ArrayList<>(taken > 0 ? pending.subList(0, taken) : search.next(size));
            // the default is measured with every batch anyway, as the baseline
            configs.removeIf(c -> c.equals(task.defaultConfig()));
            if (configs.isEmpty()) {
                if (taken > 0) pending.subList(0, taken).clear(); // only the default: nothing to measure
                if (search.exhausted()) {
                    notes.put(task.key(), "space exhausted");
                    scheduler.finish(task);
                }
                continue;
            }
            MeasuredBatch batch;
            try {
                batch = runner.measureWithBaseline(task, configs);
            } catch (BaselineFailedException e) {
                // nothing of the batch can be trusted without its reference: record why; a second failure ends the task
                // (one may be the machine's load, a timeout under a busy neighbour)
                append(List.of(e.baseline()), task);
                measured++;
                if (baselineFailures.merge(task.key(), 1, Integer::sum) >= 2) {
                    notes.put(task.key(), "the default config failed twice: " + e.getMessage());
                    scheduler.finish(task);
                }
                continue;
            }
            if (taken > 0) pending.subList(0, taken).clear();
            List<Measurement> round = new ArrayList<>();
            round.add(batch.baseline());
            round.addAll(batch.results());
            append(round, task);
            // the default is a point of the space too: once observed, the search never proposes it
            if (search.history().trials() == 0) search.observe(List.of(batch.baseline()));
            search.observe(batch.results());
            scheduler.recordRound(task, batch.results(), batch.baselineUs());
            trials += batch.results().size();
            measured += round.size();
            listener.afterRound(task, batch, status(scheduler, trials, start));
        }
        return new Result(status(scheduler, trials, start), notes);
    }

    private Status status(TaskScheduler scheduler, int trials, Instant start) {
        return new Status(trials, Duration.between(start, Instant.now()), options, scheduler.progress(), scheduler.defaultModelUs(), scheduler.modelUs());
    }

    /**
     * Configs worth measuring first for {@code task}, from records of other workloads measured in {@code context}
     * (same target, device class and compiler) with the task's template: the configs that beat their workload's default
     * and are points of this task's space (knob values fit its shape), the nearest workloads' first
     * ({@link WorkloadDistance}), each workload's by speedup — at most {@code limit}. The speedup is over the median of
     * the workload's default measurements, not over the one in the config's batch: a batch whose default was measured
     * slow (a busy machine) would put its every config first.
     */
    public static List<ScheduleConfig> transferred(TuningTask task, List<TuningRecord> prior, RecordContext context, int limit) {
        Map<String, List<TuningRecord>> byWorkload = new LinkedHashMap<>();
        for (TuningRecord r : prior) {
            if (!r.workloadKey().equals(task.key()) && r.template().equals(task.template()) && sameContext(r, context)) {
                byWorkload.computeIfAbsent(r.workloadKey(), k -> new ArrayList<>()).add(r);
            }
        }
        List<String> nearestFirst = byWorkload.keySet().stream()
                .sorted(Comparator.comparingDouble((String w) -> WorkloadDistance.between(w, task.key()))).toList();
        LinkedHashSet<ScheduleConfig> out = new LinkedHashSet<>();
        for (String workload : nearestFirst) {
            List<TuningRecord> records = byWorkload.get(workload);
            double defaultUs = defaultMedian(records);
            Map<ScheduleConfig, Double> speedup = new LinkedHashMap<>(); // ties keep the records' order
            for (TuningRecord r : records) {
                if (!r.fasterThanDefault() || r.config().equals(task.defaultConfig()) || !inSpace(task, r.config())) continue;
                speedup.merge(r.config(), defaultUs / r.costUs(), Math::max);
            }
            speedup.entrySet().stream().sorted(Map.Entry.<ScheduleConfig, Double>comparingByValue().reversed()).forEach(e -> out.add(e.getKey()));
        }
        return out.stream().limit(limit).toList();
    }

    private static boolean inSpace(TuningTask task, ScheduleConfig config) {
        try {
            task.space().check(config);
            return true;
        } catch (IllegalArgumentException e) { // a knob value this workload's shape does not offer
            return false;
        }
    }

    private static boolean sameContext(TuningRecord r, RecordContext context) {
        return r.target().equals(context.target()) && r.deviceClass().equals(context.device().deviceClass()) && r.compiler().equals(context.compiler());
    }

    /**
     * The search of {@code task}, made when its first round comes: it observes the task's resumed measurements, and a
     * model-guided one starts its cost model from the samples the searches made so far measured.
     */
    private SearchStrategy search(TuningTask task, int index, Map<String, SearchStrategy> made, List<Measurement> resumed) {
        long seed = options.seed() + index;
        SearchStrategy s;
        if (options.strategy().equals(ModelGuidedSearch.NAME)) {
            List<CostSample> learned = new ArrayList<>();
            for (SearchStrategy other : made.values()) if (other instanceof ModelGuidedSearch m) learned.addAll(m.measuredSamples());
            s = new ModelGuidedSearch(task, seed, CostModels.create(seed), ModelGuidedSearch.Options.DEFAULT, learned);
        } else {
            s = SearchStrategies.create(options.strategy(), task, seed);
        }
        if (!resumed.isEmpty()) s.observe(resumed);
        return s;
    }

    /**
     * The median of the default's cost over the batches of {@code records} (one workload's): a batch's records share its
     * default's measurement and time, so each batch counts once, whatever its size. NaN when none carries one.
     */
    static double defaultMedian(List<TuningRecord> records) {
        Map<Instant, Double> byBatch = new HashMap<>();
        for (TuningRecord r : records) r.defaultCostUs().ifPresent(d -> byBatch.put(r.measuredAt(), d));
        return byBatch.isEmpty() ? Double.NaN : TaskScheduler.median(List.copyOf(byBatch.values()));
    }

    /**
     * Prior records of {@code task} measured in this context, which the scheduler counts as a round (and the task's
     * search will observe); empty when there are none. Each batch's records hold its default's measurement, which the
     * scheduler counts as one of the default's.
     */
    private List<Measurement> resume(TuningTask task, TaskScheduler scheduler, List<TuningRecord> prior) {
        List<TuningRecord> records = prior.stream()
                .filter(r -> r.workloadKey().equals(task.key()) && sameContext(r, context) && r.template().equals(task.template())).toList();
        List<Measurement> mine = records.stream().map(TuningRecord::measurement).toList();
        // records without their default's own line (a `relayc records best` file) still carry its cost per batch
        boolean defaultMeasured = mine.stream().anyMatch(m -> m.ok() && m.config().equals(task.defaultConfig()));
        if (!mine.isEmpty()) scheduler.recordRound(task, mine, defaultMeasured ? Double.NaN : defaultMedian(records));
        return mine;
    }

    private void append(List<Measurement> measured, TuningTask task) {
        if (records == null) return;
        try {
            RecordFile.append(records, TuningRecord.batch(measured, task.defaultConfig(), context, Instant.now()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append tuning records to " + records + ": " + e.getMessage(), e);
        }
    }

    /** How many times one run of {@code optimized} calls each task's kernels (the graph's kernel calls, by workload). */
    public static Map<String, Integer> callsPerWorkload(IRModule optimized, List<TuningTask> tasks) {
        GraphPlan graph = GraphBuilder.build(optimized);
        Map<String, String> workloadOf = new HashMap<>();
        for (TuningTask t : tasks) for (String k : t.kernels()) workloadOf.put(k, t.key());
        Map<String, Integer> calls = new LinkedHashMap<>();
        for (Step s : graph.steps()) {
            if (s instanceof Step.KernelCall k) {
                String workload = workloadOf.get(graph.kernels().get(k.kernel()).name());
                if (workload != null) calls.merge(workload, 1, Integer::sum);
            }
        }
        return calls;
    }
}
