package dev.relayfarm.tuning.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.MeasureOptions;
import dev.relayfarm.tuning.measure.SandboxedRunner;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.tuning.record.WorkloadDistance;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tuner over the five real tasks of {@link TuningModels#LAYERS}: real kernels built and measured in the sandbox. */
class TunerTest {
    private static final Target HOST = Target.host();

    @Test
    void tunesEveryTaskWithinTheBudgetWritesEveryMeasurementAndResumesWithoutRepeating(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        CCompiler cc = CCompiler.host().orElseThrow().withCache(tmp.resolve("cc"));
        IRModule optimized = TuningModels.optimizedLayers(HOST);
        List<TuningTask> tasks = Stages.tasks(optimized, HOST);
        Map<String, Integer> calls = Tuner.callsPerWorkload(optimized, tasks);
        assertEquals(2, calls.get(tasks.getFirst().key()), "two kernels share the first dense shape");
        assertEquals(6, calls.values().stream().mapToInt(Integer::intValue).sum(), "six kernel calls per run");

        Path records = tmp.resolve("records.jsonl");
        RecordContext context = RecordContext.local(HOST, cc);
        SandboxedRunner runner = new SandboxedRunner(cc, MeasureOptions.FAST, tmp.resolve("runs"));
        List<Tuner.Status> rounds = new ArrayList<>();
        Tuner.Options options = new Tuner.Options("random", 2, 12, null, 1, 1000);
        Tuner.Result r = new Tuner(runner, context, records, options, (task, batch, status) -> rounds.add(status)).tune(tasks, calls, List.of());

        assertEquals(12, r.status().trials(), "the trial budget is spent exactly");
        // a round of 2 per task, then more; a round is smaller when the search proposed the default (measured anyway)
        assertTrue(rounds.size() >= 6 && rounds.size() <= 12, rounds.size() + " rounds");
        assertNotNull(rounds.getLast().eta());
        for (TaskScheduler.Progress p : r.status().tasks()) {
            assertTrue(p.trials() >= 1, p.task().key() + " got a round");
            assertTrue(Double.isFinite(p.defaultUs()) && p.defaultUs() > 0, p.toString());
            assertTrue(p.bestUs() <= p.defaultUs(), "the default is a candidate too: " + p);
        }
        assertTrue(r.status().modelUs() <= r.status().defaultModelUs());

        List<TuningRecord> written = RecordFile.read(records);
        for (TaskScheduler.Progress p : r.status().tasks()) {
            List<TuningRecord> of = written.stream().filter(rec -> rec.workloadKey().equals(p.task().key())).toList();
            double[] defaults = of.stream().filter(rec -> rec.ok() && rec.config().equals(p.task().defaultConfig())).mapToDouble(TuningRecord::costUs).sorted().toArray();
            double median = defaults.length % 2 == 1 ? defaults[defaults.length / 2] : (defaults[defaults.length / 2 - 1] + defaults[defaults.length / 2]) / 2;
            double cheapest = of.stream().filter(rec -> !rec.config().equals(p.task().defaultConfig())).mapToDouble(TuningRecord::costUs).min().orElseThrow();
            assertEquals(median, p.defaultUs(), 0, "the scheduler's default is the median of the default's measurements written for " + p.task().key());
            assertEquals(Math.min(cheapest, median), p.bestUs(), 0, "its best is the cheapest other config's, or the default's median: " + p.task().key());
        }
        assertEquals(12 + rounds.size(), written.size(), "every measured config and every round's default, as they came");
        for (TuningRecord rec : written) {
            assertEquals(rec, TuningRecord.fromJson(rec.toJson()));
            assertEquals(context.device().deviceClass(), rec.deviceClass());
            assertTrue(rec.defaultCostUs().isPresent(), "each record carries its batch's default cost: " + rec.toJson());
        }

        // resume: the second run sees the first run's records and never measures one of their configs again
        Set<String> before = configs(written, tasks);
        Path more = tmp.resolve("more.jsonl");
        Tuner.Result again = new Tuner(runner, context, more, new Tuner.Options("random", 2, 6, null, 1, 1000), null).tune(tasks, calls, written);
        assertEquals(6, again.status().trials());
        Set<String> after = configs(RecordFile.read(more), tasks);
        Set<String> repeated = new HashSet<>(after);
        repeated.retainAll(before);
        assertEquals(Set.of(), repeated, "resumed searches propose only configs not measured before");
        assertFalse(after.isEmpty());
    }

    /** Records of another model's workload with the same template: its config that beat its default is measured first. */
    @Test
    void configsThatBeatTheDefaultOnAnotherWorkloadAreMeasuredFirst(@TempDir Path tmp) {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        CCompiler cc = CCompiler.host().orElseThrow().withCache(tmp.resolve("cc"));
        RecordContext context = RecordContext.local(HOST, cc);
        TuningTask seen = Stages.tasks(TuningModels.optimizedLayers(HOST), HOST).getFirst(); // dense 1x64 by 64x64
        TuningTask fresh = wideDense();
        assertEquals(seen.template(), fresh.template());
        ScheduleConfig good = transferable(seen, fresh).findFirst().orElseThrow();
        ScheduleConfig slow = seen.space().all().filter(c -> !c.equals(good) && !c.equals(seen.defaultConfig())).findFirst().orElseThrow();
        Instant at = Instant.now();
        List<TuningRecord> prior = List.of(
                TuningRecord.of(new Measurement(seen.key(), good, new Measurement.Cost(5, 0.01, 100, 5)), context, OptionalDouble.of(10), at),
                TuningRecord.of(new Measurement(seen.key(), slow, new Measurement.Cost(20, 0.01, 100, 5)), context, OptionalDouble.of(10), at));
        assertEquals(List.of(good), Tuner.transferred(fresh, prior, context, 4), "only what beat its default transfers");

        List<List<ScheduleConfig>> rounds = new ArrayList<>();
        new Tuner(new SandboxedRunner(cc, MeasureOptions.FAST, tmp.resolve("runs")), context, null, new Tuner.Options("random", 4, 5, null, 1, 100),
                (task, batch, status) -> rounds.add(batch.results().stream().map(Measurement::config).toList())).tune(List.of(fresh), Map.of(), prior);
        assertEquals(List.of(good), rounds.getFirst(), "the first round measures the transferred config");
        assertFalse(rounds.get(1).contains(good), "and the search goes on from there without it");
    }

    /** A batch whose default was measured slow (a busy machine) does not put its configs first: speedups are over the default's median. */
    @Test
    void transferredConfigsAreRankedAgainstTheMedianOfTheirWorkloadsDefault(@TempDir Path tmp) {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        RecordContext context = RecordContext.local(HOST, CCompiler.host().orElseThrow().withCache(tmp.resolve("cc")));
        TuningTask seen = Stages.tasks(TuningModels.optimizedLayers(HOST), HOST).getFirst();
        List<ScheduleConfig> two = transferable(seen, wideDense()).limit(2).toList();
        ScheduleConfig steady = two.get(0), lucky = two.get(1);
        Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
        // the default measured 10 µs in two batches and 30 in a third; steady: 7 µs beside a 10 (1.43x); lucky: 12 µs
        // beside the 30 (2.5x over that batch's default, slower than the default's median of 10)
        List<TuningRecord> prior = List.of(
                TuningRecord.of(new Measurement(seen.key(), steady, new Measurement.Cost(7, 0.01, 100, 5)), context, OptionalDouble.of(10), t0),
                TuningRecord.of(new Measurement(seen.key(), seen.defaultConfig(), new Measurement.Cost(10, 0.01, 100, 5)), context, OptionalDouble.of(10), t0.plusSeconds(1)),
                TuningRecord.of(new Measurement(seen.key(), lucky, new Measurement.Cost(12, 0.01, 100, 5)), context, OptionalDouble.of(30), t0.plusSeconds(2)));
        assertEquals(List.of(steady, lucky), Tuner.transferred(wideDense(), prior, context, 2));
    }

    /** Configs of the workload nearest in shape come first, whatever the speedups a farther one's configs reached. */
    @Test
    void theNearestWorkloadsConfigsTransferFirst(@TempDir Path tmp) {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        RecordContext context = RecordContext.local(HOST, CCompiler.host().orElseThrow().withCache(tmp.resolve("cc")));
        TuningTask seen = Stages.tasks(TuningModels.optimizedLayers(HOST), HOST).getFirst(); // dense 1x64 by 64x64
        TuningTask fresh = wideDense(); // dense 1x128 by 64x128
        List<ScheduleConfig> two = transferable(seen, fresh).limit(2).toList();
        String near = "nn.dense(data[1, 128],weight[64, 96])", far = "nn.dense(data[16, 1024],weight[1024, 1024])";
        assertTrue(WorkloadDistance.between(near, fresh.key()) < WorkloadDistance.between(far, fresh.key()), fresh.key());
        Instant at = Instant.parse("2026-01-01T00:00:00Z");
        List<TuningRecord> prior = List.of(
                TuningRecord.of(new Measurement(far, two.get(0), new Measurement.Cost(2, 0.01, 100, 5)), context, OptionalDouble.of(10), at),
                TuningRecord.of(new Measurement(near, two.get(1), new Measurement.Cost(9, 0.01, 100, 5)), context, OptionalDouble.of(10), at));
        assertEquals(List.of(two.get(1), two.get(0)), Tuner.transferred(fresh, prior, context, 4), "the near workload's 1.1x before the far one's 5x");
    }

    /** More transferred configs than a round holds: one round after another, each measured once, then the search. */
    @Test
    void transferredConfigsAreMeasuredRoundByRound(@TempDir Path tmp) {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        CCompiler cc = CCompiler.host().orElseThrow().withCache(tmp.resolve("cc"));
        RecordContext context = RecordContext.local(HOST, cc);
        TuningTask seen = Stages.tasks(TuningModels.optimizedLayers(HOST), HOST).getFirst();
        TuningTask fresh = wideDense();
        List<ScheduleConfig> three = transferable(seen, fresh).limit(3).toList();
        Instant at = Instant.parse("2026-01-01T00:00:00Z");
        List<TuningRecord> prior = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            prior.add(TuningRecord.of(new Measurement(seen.key(), three.get(i), new Measurement.Cost(5 + i, 0.01, 100, 5)), context, OptionalDouble.of(10), at));
        }
        List<List<ScheduleConfig>> rounds = new ArrayList<>();
        new Tuner(new SandboxedRunner(cc, MeasureOptions.FAST, tmp.resolve("runs")), context, null, new Tuner.Options("random", 1, 5, null, 1, 100),
                (task, batch, status) -> rounds.add(batch.results().stream().map(Measurement::config).toList())).tune(List.of(fresh), Map.of(), prior);
        assertEquals(List.of(List.of(three.get(0)), List.of(three.get(1)), List.of(three.get(2))), rounds.subList(0, 3), "by speedup, one a round");
        for (List<ScheduleConfig> later : rounds.subList(3, rounds.size())) assertFalse(three.contains(later.getFirst()), "measured once: " + later);
    }

    /** A dense layer of another shape than {@link TuningModels#LAYERS}' first, with the same template. */
    private static TuningTask wideDense() {
        IRModule other = Stages.optimize(Stages.inferTypes(Stages.importModel(ModelSource.of("wide.relay", ModelFormat.RELAY, """
                #[version = "0.0.5"]
                def @main(%x: Tensor[(1, 128), float32], %w: Tensor[(64, 128), float32]) {
                  nn.relu(nn.dense(%x, %w, units=64))
                }
                """.getBytes(StandardCharsets.UTF_8)), "")), 3, HOST);
        return Stages.tasks(other, HOST).getFirst();
    }

    /** Configs of {@code seen}'s space that are points of {@code fresh}'s too, and the default of neither. */
    private static Stream<ScheduleConfig> transferable(TuningTask seen, TuningTask fresh) {
        return seen.space().all().filter(c -> !c.equals(seen.defaultConfig()) && !c.equals(fresh.defaultConfig()))
                .filter(c -> { try { fresh.space().check(c); return true; } catch (IllegalArgumentException e) { return false; } });
    }

    /** The model-guided search end to end: later tasks' cost models start from what the earlier ones measured. */
    @Test
    void theModelGuidedSearchRunsAcrossTasks(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        CCompiler cc = CCompiler.host().orElseThrow().withCache(tmp.resolve("cc"));
        IRModule optimized = TuningModels.optimizedLayers(HOST);
        List<TuningTask> tasks = Stages.tasks(optimized, HOST);
        Path records = tmp.resolve("xgb.jsonl");
        Tuner.Result r = new Tuner(new SandboxedRunner(cc, MeasureOptions.FAST, tmp.resolve("runs")), RecordContext.local(HOST, cc), records,
                new Tuner.Options("xgb", 4, 24, null, 7, 1000), null).tune(tasks, Tuner.callsPerWorkload(optimized, tasks), List.of());
        assertEquals(24, r.status().trials());
        assertTrue(r.status().tasks().stream().allMatch(p -> p.trials() > 0), "every task measured");
        assertEquals(24, RecordFile.read(records).stream().filter(rec -> tasks.stream().noneMatch(t -> t.defaultConfig().equals(rec.config())
                && t.key().equals(rec.workloadKey()))).count(), "24 candidates besides the defaults");
    }

    @Test
    void optionsNameWhatIsWrong() {
        var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new Tuner.Options("anneal", 8, 10, null, 1, 10));
        assertTrue(e.getMessage().contains("unknown strategy 'anneal'") && e.getMessage().contains("xgb"), e.getMessage());
        assertThrows(() -> new Tuner.Options("xgb", 8, 0, null, 1, 10), "give a budget");
        assertThrows(() -> new Tuner.Options("xgb", 0, 10, null, 1, 10), "at least 1 config");
    }

    private static void assertThrows(Runnable r, String fragment) {
        var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, r::run);
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
    }

    /** workload + config of every non-default record. */
    private static Set<String> configs(List<TuningRecord> records, List<TuningTask> tasks) {
        Set<String> out = new HashSet<>();
        for (TuningRecord r : records) {
            ScheduleConfig def = tasks.stream().filter(t -> t.key().equals(r.workloadKey())).findFirst().orElseThrow().defaultConfig();
            if (!r.config().equals(def)) out.add(r.workloadKey() + " " + r.config().toJson());
        }
        return out;
    }
}
