package dev.relayfarm.tuning.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.ScheduleStatus;
import dev.relayfarm.tuning.StoredSchedule;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.ScheduleFile;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.record.TuningRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ModelGuard}: which tuned configs survive the whole-model timing, and the rejections it writes. */
class ModelGuardTest {
    private static final String TARGET = "c -mcpu=x86-64-v3";
    private static final Device HERE = Device.of("x86_64", "Test CPU", List.of("avx2", "fma"), 2);

    private static ScheduleConfig config(int tile) {
        return new ScheduleConfig("conv2d_NCHWc.x86", Map.of("tile_ow", tile));
    }

    private static StoredSchedule schedule(String key, double us, double defaultUs) {
        return new StoredSchedule(1, key, TARGET, HERE.deviceClass(), config(4), ScheduleStatus.APPROVED, OptionalDouble.of(us), OptionalDouble.of(defaultUs));
    }

    /** A timer whose tuned model costs {@code tunedMs} of the set of workloads it is given; remembers what it was asked. */
    private record Timer(Function<Set<String>, Double> tunedMs, List<Set<String>> asked) implements ModelGuard.ModelTimer {
        Timer(Function<Set<String>, Double> tunedMs) {
            this(tunedMs, new ArrayList<>());
        }

        @Override
        public ModelGuard.Comparison compare(Map<String, ScheduleConfig> configs) {
            asked.add(configs.keySet());
            return new ModelGuard.Comparison(configs.keySet(), 10.0, tunedMs.apply(configs.keySet()), 30);
        }
    }

    private static Map<String, StoredSchedule> chosen() {
        Map<String, StoredSchedule> m = new LinkedHashMap<>();
        m.put("big", schedule("big", 80, 100)); // 1.25x alone
        m.put("tiny", schedule("tiny", 99, 100)); // 1.01x alone
        return m;
    }

    @Test
    void aFasterTunedModelKeepsEveryConfig() {
        Timer t = new Timer(s -> 9.0);
        ModelGuard.Verdict v = ModelGuard.check(chosen(), t);
        assertEquals(Set.of("big", "tiny"), v.kept().keySet());
        assertEquals(Map.of(), v.rejected());
        assertEquals(1, t.asked().size(), "one timing when the first is faster");
    }

    @Test
    void aSlowerTunedModelKeepsOnlyTheConfidentGainsWhenThoseAreFaster() {
        Timer t = new Timer(s -> s.contains("tiny") ? 10.5 : 9.5);
        ModelGuard.Verdict v = ModelGuard.check(chosen(), t);
        assertEquals(List.of(Set.of("big", "tiny"), Set.of("big")), t.asked());
        assertEquals(Set.of("big"), v.kept().keySet());
        assertEquals(Set.of("tiny"), v.rejected().keySet());
        assertEquals(List.of(1.05, 0.95), v.comparisons().stream().map(ModelGuard.Comparison::ratio).toList());
    }

    @Test
    void theRoundsDecideNotTheOverallMedians() {
        List<Double> steady = List.of(0.95, 0.96, 0.94, 0.97, 0.95, 0.96, 0.93, 1.01);
        assertTrue(new ModelGuard.Comparison(Set.of("big"), 10.0, 9.6, 30, steady).tunedFaster(), "7 of 8 rounds, median 0.955");
        // 10% faster over all runs, because a slow spell fell on more untuned blocks; round by round a tie
        List<Double> spell = List.of(0.70, 0.72, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01);
        ModelGuard.Comparison tie = new ModelGuard.Comparison(Set.of("big"), 10.0, 9.0, 30, spell);
        assertFalse(tie.tunedFaster());
        assertEquals(4, tie.roundsWon());
        // the median round alone is not enough: 5 of 8 rounds won is a coin's luck
        assertFalse(new ModelGuard.Comparison(Set.of("big"), 10.0, 9.0, 30, List.of(0.9, 0.9, 0.9, 0.9, 0.9, 1.1, 1.1, 1.1)).tunedFaster());
        assertFalse(new ModelGuard.Comparison(Set.of("big"), 10.0, 9.75, 30).tunedFaster(), "2.5% is below the 3% a gain must reach");
        ModelGuard.Verdict v = ModelGuard.check(Map.of("big", schedule("big", 80, 100)), configs -> tie);
        assertEquals(Set.of("big"), v.rejected().keySet());
    }

    @Test
    void whenNothingIsFasterEveryConfigIsRejectedAndATieIsNotFaster() {
        ModelGuard.Verdict v = ModelGuard.check(chosen(), new Timer(s -> 9.8)); // 2% faster: within the noise of two loads
        assertEquals(Map.of(), v.kept());
        assertEquals(Set.of("big", "tiny"), v.rejected().keySet());
        assertEquals(2, v.comparisons().size());
        // no confident subset to try: one timing
        Map<String, StoredSchedule> small = Map.of("tiny", schedule("tiny", 99, 100));
        Timer t = new Timer(s -> 11.0);
        assertEquals(Set.of("tiny"), ModelGuard.check(small, t).rejected().keySet());
        assertEquals(1, t.asked().size());
        assertEquals(new ModelGuard.Verdict(Map.of(), Map.of(), List.of(), 0), ModelGuard.check(Map.of(), new Timer(s -> 1.0)));
    }

    @Test
    void rejectionsCoverEveryConfigOfTheWorkloadThatBeatItsDefaultOnItsTargetAndDevice() {
        Instant t0 = Instant.parse("2025-03-01T10:00:00Z");
        java.util.function.BiFunction<ScheduleConfig, Double, TuningRecord> rec = (c, us) -> new TuningRecord("tiny", c, TARGET, HERE, "gcc", "0.1.0",
                new Measurement.Cost(us, 0.001, 10, 5), OptionalDouble.of(100), t0);
        List<TuningRecord> records = List.of(rec.apply(config(4), 95.0), rec.apply(config(8), 96.0), rec.apply(config(4), 94.0),
                rec.apply(config(16), 120.0), // slower than its default: never applies, nothing to veto
                new TuningRecord("big", config(2), TARGET, HERE, "gcc", "0.1.0", new Measurement.Cost(80, 0.01, 10, 5), OptionalDouble.of(100), t0));
        List<StoredSchedule> r = ModelGuard.rejections(Map.of("tiny", schedule("tiny", 99, 100)), records);
        assertEquals(List.of(config(4), config(8)), r.stream().map(StoredSchedule::config).toList());
        assertEquals(Set.of(ScheduleStatus.REJECTED), r.stream().map(StoredSchedule::status).collect(java.util.stream.Collectors.toSet()));
        assertEquals(Set.of("tiny"), r.stream().map(StoredSchedule::workloadKey).collect(java.util.stream.Collectors.toSet()));
    }

    @Test
    void checkRecordsAppendsRejectionsOnceAndCompileThenSkipsThoseConfigs(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        Target target = Target.host();
        List<TuningTask> tasks = TuningModels.tasks(TuningModels.LAYERS, 3);
        TuningTask task = tasks.getFirst();
        RecordContext here = RecordContext.local(target, CCompiler.host().orElseThrow());
        Instant t0 = Instant.parse("2025-03-01T10:00:00Z");
        ScheduleConfig fast = TuningModels.nonDefault(task);
        Path records = tmp.resolve("r.jsonl");
        // no newline after the last record: the rejections must not be glued onto it
        Files.writeString(records, new TuningRecord(task.key(), fast, here.target(), here.device(), here.compiler(), here.relayfarmVersion(),
                new Measurement.Cost(50, 0.001, 10, 5), OptionalDouble.of(100), t0).toJson());
        assertEquals(Map.of(task.key(), fast), ScheduleFile.choose(records, tasks, target, null));

        Timer slower = new Timer(s -> 10.5);
        ModelGuard.Verdict v = ModelGuard.checkRecords(records, tasks, target, slower);
        assertEquals(Set.of(task.key()), v.rejected().keySet());
        assertEquals(1, v.rejectionLines());
        List<String> lines = Files.readAllLines(records);
        assertEquals(2, lines.size(), "the record, then its rejection on a line of its own: " + lines);
        assertTrue(lines.get(1).contains("\"status\":\"rejected\"") && lines.get(1).contains("(1.050x)"), lines.get(1));
        assertEquals(Map.of(), ScheduleFile.choose(records, tasks, target, null), "compile no longer applies the rejected config");
        assertEquals(1, RecordFile.read(records).size(), "the measurement itself is kept");

        // checked again: nothing tuned applies any more, nothing is timed or written
        Timer again = new Timer(s -> 10.5);
        assertEquals(0, ModelGuard.checkRecords(records, tasks, target, again).rejectionLines());
        assertEquals(List.of(), again.asked());
        assertEquals(2, Files.readAllLines(records).size());
    }
}
