package dev.relayfarm.services.stages;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.store.TuningRecords;
import dev.relayfarm.services.kit.ChosenSchedule;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageHandler;
import dev.relayfarm.services.kit.StageInput;
import dev.relayfarm.services.kit.StageOutput;
import dev.relayfarm.services.kit.TuneOption;
import dev.relayfarm.services.kit.TunedPayload;
import dev.relayfarm.services.store.Devices;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.store.NewTuningRun;
import dev.relayfarm.services.store.RunWorkload;
import dev.relayfarm.services.store.ScheduleStore;
import dev.relayfarm.services.store.TuningRunCreated;
import dev.relayfarm.services.store.TuningRuns;
import dev.relayfarm.services.store.TuningTasks;
import dev.relayfarm.tuning.ScheduleRule;
import dev.relayfarm.tuning.StoredSchedule;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.record.RecordSchedules;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * ir.optimized → ir.tuned: picks a schedule for every tuning task of the module ({@link Stages#tasks}, which lowers
 * nothing), as the job's {@code tune} option says ({@link TuneOption}):
 * <ul>
 *   <li>{@code off}: every kernel gets its template's default;</li>
 *   <li>{@code apply} (the default): the stored schedule {@link ScheduleStore#choose} picks by the library's
 *       {@link ScheduleRule} (pinned, else approved and not slower than the default; same template, same device
 *       class), else the default;</li>
 *   <li>{@code budget=D}: as {@code apply}, and the workloads without a stored schedule are tuned on the farm first: a
 *       tuning run for them ({@link TuningRuns#create}: a workload another job or run is tuning already is joined, not
 *       tuned twice), announced on {@code tuning.tasks}; the stage waits until its tasks end or D has passed, then
 *       applies for each such workload its best record that beat the default in its own batch (the rule
 *       {@code relayc compile --schedules} applies to a records file: never worse than the default as measured),
 *       marked {@code tuned} — unreviewed — in the payload; the workers' PENDING schedules wait for a reviewer.</li>
 * </ul>
 * The device class tuned for and applied is {@code relayfarm.autotuner.device-class}: by default this machine's, the
 * one the local farm's agent measures and its artifacts run on. The IR passes through unchanged.
 */
@Component
@ServiceRole("autotuner")
public class AutotunerStage implements StageHandler {
    private static final Logger LOG = LoggerFactory.getLogger(AutotunerStage.class);
    private static final Duration POLL = Duration.ofSeconds(1);

    private final IrStore ir;
    private final ScheduleStore schedules;
    private final TuningRuns runs;
    private final TuningTasks tuningTasks;
    private final TuningRecords records;
    private final Devices devices;
    private final KafkaTemplate<String, String> kafka;
    private final String deviceClass;
    private final String strategy;
    private final int trialsPerTask;

    public AutotunerStage(IrStore ir, ScheduleStore schedules, TuningRuns runs, TuningTasks tuningTasks, TuningRecords records, Devices devices, KafkaTemplate<String, String> kafka,
                          @Value("${relayfarm.autotuner.device-class:}") String deviceClass, @Value("${relayfarm.autotuner.strategy:xgb}") String strategy,
                          @Value("${relayfarm.autotuner.trials-per-task:32}") int trialsPerTask) {
        this.ir = ir;
        this.schedules = schedules;
        this.runs = runs;
        this.tuningTasks = tuningTasks;
        this.records = records;
        this.devices = devices;
        this.kafka = kafka;
        this.deviceClass = deviceClass.isBlank() ? dev.relayfarm.tuning.Device.local().deviceClass() : deviceClass;
        this.strategy = strategy;
        this.trialsPerTask = trialsPerTask;
    }

    private static List<Long> concat(List<Long> a, List<Long> b) {
        List<Long> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    @Override
    public Stage stage() {
        return Stage.AUTOTUNER;
    }

    @Override
    public StageOutput run(StageInput in) throws InterruptedException {
        Target target = Target.parse(in.options().target());
        TuneOption tune = in.options().tuneOption();
        IRModule module = ir.read(in.irRef());
        // a module for the VM has no graph plan to take tasks from: its kernels compile with template defaults (issue 19)
        List<TuningTask> tasks = Stages.executor(module) == Stages.Executor.VM ? List.of() : Stages.tasks(module, target);
        Map<String, StoredSchedule> stored = tune.mode() == TuneOption.Mode.OFF ? Map.of() : schedules.choose(tasks, target, deviceClass);
        Map<String, StoredSchedule> tuned = tune.mode() == TuneOption.Mode.BUDGET ? tuneMissing(in, module, target, tasks, stored, tune.budget()) : Map.of();
        List<ChosenSchedule> chosen = new ArrayList<>();
        for (TuningTask t : tasks) {
            StoredSchedule s = stored.get(t.key()), r = tuned.get(t.key());
            chosen.add(s != null ? new ChosenSchedule(t.key(), t.template(), s.config(), ChosenSchedule.Source.STORED, s.id())
                    : r != null ? new ChosenSchedule(t.key(), t.template(), r.config(), ChosenSchedule.Source.TUNED, null)
                    : new ChosenSchedule(t.key(), t.template(), t.defaultConfig(), ChosenSchedule.Source.DEFAULT, null));
        }
        return StageOutput.of(in.irRef(), new TunedPayload(in.model(), in.options(), chosen));
    }

    /** Tunes the workloads without a stored schedule on the farm for up to {@code budget}; what beat its default, per workload. */
    private Map<String, StoredSchedule> tuneMissing(StageInput in, IRModule module, Target target, List<TuningTask> tasks, Map<String, StoredSchedule> stored,
                                                    Duration budget) throws InterruptedException {
        Set<String> missing = tasks.stream().map(TuningTask::key).filter(k -> !stored.containsKey(k)).collect(Collectors.toSet());
        if (missing.isEmpty()) return Map.of();
        List<RunWorkload> workloads = TuningRuns.workloads(module, target).stream().filter(w -> missing.contains(w.workloadKey())).toList();
        TuningRunCreated run = runs.create(new NewTuningRun(in.job().id(), in.model().name(), in.irRef(), target.toString(), deviceClass, strategy, budget,
                trialsPerTask, "autotuner", workloads));
        for (long task : tuningTasks.announceOrder(concat(run.newTaskIds(), run.joinedTaskIds()))) {
            try {
                kafka.send(FarmTopics.tuningTask(task)).get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException("could not announce tuning task " + task + " on " + FarmTopics.TUNING_TASKS + ": " + e, e);
            }
        }
        LOG.info("job {}: tuning run {} for {} workloads ({} new tasks, {} joined), waiting up to {}", in.job().id(), run.runId(), workloads.size(),
                run.newTaskIds().size(), run.joinedTaskIds().size(), budget);
        long deadline = System.nanoTime() + budget.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                Optional<String> status = runs.refreshStatus(run.runId());
                if (status.isEmpty() || !status.get().equals("RUNNING")) break;
                Thread.sleep(POLL);
            }
        } catch (InterruptedException e) { // the job was cancelled: so is its run (tasks another run needs go on)
            runs.cancel(run.runId());
            throw e;
        }
        // the records the agents made carry their compiler; codegen here is meant to be the same machine's (the class's)
        String compiler = devices.compilerOf(deviceClass).orElseGet(() -> CCompiler.forTarget(target).map(CCompiler::identity).orElse("unknown"));
        Map<String, StoredSchedule> out = new java.util.HashMap<>();
        for (TuningTask t : tasks) {
            if (!missing.contains(t.key())) continue;
            List<StoredSchedule> best = RecordSchedules.stored(records.of(t.key(), target.toString(), deviceClass), compiler);
            ScheduleRule.choose(t, deviceClass, best).ifPresent(s -> out.put(t.key(), s));
        }
        LOG.info("job {}: tuning run {} gave {} of {} workloads a config that beat the default", in.job().id(), run.runId(), out.size(), missing.size());
        return out;
    }
}
