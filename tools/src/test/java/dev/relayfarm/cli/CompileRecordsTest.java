package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.artifact.ScheduleSource;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code relayc compile --schedules records.jsonl}: per workload the best record applies only when it was measured
 * faster than its default for this target, on this device class, with this C compiler — never a record of another
 * target, device class or compiler by accident (apache/tvm#15549) — and the manifest says which kernels are tuned.
 */
class CompileRecordsTest {
    /** Five workloads: dense layers of four shapes (the first twice) and a softmax. */
    private static final String LAYERS = TuningModels.LAYERS;
    private static final Device OTHER_DEVICE = Device.of("x86_64", "Some Other CPU", List.of("avx", "avx2"), 64);

    @TempDir
    Path tmp;
    private Path model;
    private Target target;
    private List<TuningTask> tasks;
    private RecordContext here;

    @BeforeEach
    void model() throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        model = tmp.resolve("layers.relay");
        Files.writeString(model, LAYERS);
        target = Target.parse(CompileRequest.DEFAULT_TARGET);
        IRModule optimized = Stages.optimize(Stages.inferTypes(Stages.importModel(ModelSource.read(model), Map.of())), 3, target);
        tasks = Stages.tasks(optimized, target);
        assertEquals(5, tasks.size(), tasks.toString());
        here = RecordContext.local(target, CCompiler.forTarget(target).orElseThrow());
    }

    private static ScheduleConfig other(TuningTask task) {
        ScheduleConfig c = task.space().get(task.space().size() - 1);
        return c.equals(task.defaultConfig()) ? task.space().get(0) : c;
    }

    private static TuningRecord record(TuningTask task, ScheduleConfig config, double us, double defaultUs, RecordContext ctx) {
        return TuningRecord.of(new Measurement(task.key(), config, new Measurement.Cost(us, 0.01, 100, 5)), ctx, OptionalDouble.of(defaultUs),
                Instant.parse("2025-03-01T10:00:00Z"));
    }

    private Map<String, Manifest.Kernel> compile(Path records, String... extra) {
        Path out = tmp.resolve("art" + System.nanoTime());
        List<String> args = new java.util.ArrayList<>(List.of("compile", model.toString(), "--schedules", records.toString(), "-o", out.toString()));
        args.addAll(List.of(extra));
        CliRun r = CliRun.relayc(args.toArray(String[]::new));
        assertEquals(0, r.exitCode(), r.err());
        Map<String, Manifest.Kernel> byWorkload = new HashMap<>();
        for (Manifest.Kernel k : Manifest.read(out).kernels()) byWorkload.put(k.workload(), k);
        return byWorkload;
    }

    private static ScheduleConfig config(Manifest.Kernel k) {
        return ScheduleConfig.fromJson(k.config().toString());
    }

    @Test
    void onlyAFasterRecordOfThisTargetDeviceClassAndCompilerApplies() throws Exception {
        RecordContext otherDevice = new RecordContext(here.target(), OTHER_DEVICE, here.compiler(), here.relayfarmVersion());
        RecordContext otherTarget = new RecordContext("c -mcpu=x86-64", here.device(), here.compiler(), here.relayfarmVersion());
        RecordContext otherCompiler = new RecordContext(here.target(), here.device(), here.compiler() + " (another build)", here.relayfarmVersion());
        Path records = tmp.resolve("records.jsonl");
        RecordFile.append(records, List.of(
                record(tasks.get(0), other(tasks.get(0)), 10, 20, here),           // faster than its default: applies
                record(tasks.get(0), tasks.get(0).defaultConfig(), 20, 20, here),
                record(tasks.get(1), other(tasks.get(1)), 30, 20, here),           // slower than its default: not applied
                record(tasks.get(2), other(tasks.get(2)), 1, 20, otherDevice),     // fast, but on another device class
                record(tasks.get(3), other(tasks.get(3)), 1, 20, otherTarget),     // fast, but for another target
                record(tasks.get(4), other(tasks.get(4)), 1, 20, otherCompiler))); // fast, but built by another compiler
        Map<String, Manifest.Kernel> k = compile(records);
        assertEquals(other(tasks.get(0)), config(k.get(tasks.get(0).key())));
        assertEquals(ScheduleSource.TUNED, k.get(tasks.get(0).key()).source());
        for (TuningTask t : tasks.subList(1, 5)) {
            assertEquals(t.defaultConfig(), config(k.get(t.key())), t.key());
            assertEquals(ScheduleSource.DEFAULT, k.get(t.key()).source(), t.key());
        }
        // the records of the other device apply when compiling for that device class, and only those
        Map<String, Manifest.Kernel> there = compile(records, "--device-class", OTHER_DEVICE.deviceClass());
        assertEquals(other(tasks.get(2)), config(there.get(tasks.get(2).key())));
        assertEquals(tasks.get(0).defaultConfig(), config(there.get(tasks.get(0).key())));
    }

    @Test
    void theBestRecordWinsAndSaysSoOnTheCommandLine() throws Exception {
        ScheduleConfig second = tasks.get(0).space().get(0).equals(other(tasks.get(0))) ? tasks.get(0).space().get(1) : tasks.get(0).space().get(0);
        Path records = tmp.resolve("records.jsonl");
        RecordFile.append(records, List.of(record(tasks.get(0), second, 15, 20, here), record(tasks.get(0), other(tasks.get(0)), 12, 20, here)));
        assertEquals(other(tasks.get(0)), config(compile(records).get(tasks.get(0).key())));
        Path out = tmp.resolve("printed");
        CliRun r = CliRun.relayc("compile", model.toString(), "--schedules", records.toString(), "-o", out.toString());
        assertTrue(r.out().contains("schedules: 1 of 5 workloads tuned"), r.out());
    }

    @Test
    void aBadRecordLineIsAUserErrorNamingFileAndLine() throws Exception {
        Path records = tmp.resolve("records.jsonl");
        RecordFile.append(records, List.of(record(tasks.get(0), other(tasks.get(0)), 10, 20, here)));
        Files.writeString(records, "{\"workload_key\": \"w\", \"cost_us\": \"fast\"}\n", java.nio.file.StandardOpenOption.APPEND);
        CliRun r = CliRun.relayc("compile", model.toString(), "--schedules", records.toString(), "-o", tmp.resolve("x").toString());
        assertEquals(2, r.exitCode(), r.out());
        assertTrue(r.err().contains("records.jsonl:2: "), r.err());
    }
}
