package dev.relayfarm.services.tuner;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.store.Devices;
import dev.relayfarm.services.farm.FarmConsumerLoop;
import dev.relayfarm.services.farm.FarmHost;
import dev.relayfarm.services.farm.FarmMessages;
import dev.relayfarm.services.store.TuningRecords;
import dev.relayfarm.services.store.TaskRow;
import dev.relayfarm.services.store.TuningTasks;
import dev.relayfarm.services.farm.TuningTaskMessage;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.store.ScheduleReviews;
import dev.relayfarm.services.store.TuningRuns;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.BaselineFailedException;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordSchedules;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.tuning.scheduler.TaskScheduler;
import dev.relayfarm.tuning.scheduler.Tuner;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.tuning.VtaLayerTask;
import dev.relayfarm.vta.tuning.VtaLayerTasks;
import dev.relayfarm.vta.tuning.VtaRecords;
import dev.relayfarm.vta.tuning.VtaTarget;
import dev.relayfarm.vta.tuning.VtaTuner;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.kafka.KafkaProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A tuner worker (ARCHITECTURE.md section 5): takes tasks from {@code tuning.tasks} (one consumer group for all
 * workers, {@link TunerProperties#concurrency} members per worker) and runs the library's {@link Tuner} on each, with
 * the rounds measured by hardware agents ({@link RemoteMeasurer}). Progress goes to the task's row after every round;
 * at the end the best config, if it beat the default by the library's rule ({@link TuningRecord#fasterThanDefault}),
 * is proposed as a PENDING schedule. A task whose target is a VTA one ({@code vta-sim ...}) is a layer of an
 * accelerator-offloaded module instead: the library's {@link VtaTuner} runs it, measured by FPGA agents ({@link #runVta}).
 *
 * <p>A worker that dies mid-task loses nothing measured: every round's records are in {@code tuning_records} before
 * the search sees them, and the task's message, not yet committed, goes to another worker once the group's session
 * times out. That worker resumes from the records (the Tuner's {@code prior}): their configs are never proposed
 * again and count against the task's trial budget.
 */
@Component
@ServiceRole(Stage.TUNER_WORKER)
@EnableConfigurationProperties(TunerProperties.class)
public class TunerWorker implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(TunerWorker.class);

    private final TunerProperties props;
    private final TuningTasks tasks;
    private final TuningRuns runs;
    private final ScheduleReviews reviews;
    private final TuningRecords records;
    private final Devices devices;
    private final IrStore ir;
    private final ResultInbox inbox;
    private final KafkaTemplate<String, String> kafka;
    private final KafkaProperties kafkaProperties;
    private final TransactionTemplate tx;
    private final CandidateLowering lowering;
    private final String id;
    private final List<FarmConsumerLoop> loops = new ArrayList<>();
    private volatile boolean running;

    public TunerWorker(TunerProperties props, TuningTasks tasks, TuningRuns runs, ScheduleReviews reviews, TuningRecords records, Devices devices, IrStore ir, ResultInbox inbox,
                       KafkaTemplate<String, String> kafka, KafkaProperties kafkaProperties, TransactionTemplate tx, ObjectProvider<CandidateLowering> lowering) {
        this.props = props;
        this.tasks = tasks;
        this.runs = runs;
        this.reviews = reviews;
        this.records = records;
        this.devices = devices;
        this.ir = ir;
        this.inbox = inbox;
        this.kafka = kafka;
        this.kafkaProperties = kafkaProperties;
        this.tx = tx;
        this.lowering = lowering.getIfAvailable(() -> CandidateLowering.LIBRARY);
        this.id = "worker-" + FarmHost.name() + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 6);
    }

    public String workerId() {
        return id;
    }

    @Override
    public void start() {
        try {
            if (!inbox.awaitReady(Duration.ofSeconds(60))) LOG.warn("measure.results has no partitions for worker {} yet; starting anyway", id);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        for (int i = 0; i < props.concurrency(); i++) {
            loops.add(new FarmConsumerLoop("tuner-" + i, FarmTopics.TUNING_TASKS, "tuner-workers", kafkaProperties.buildConsumerProperties(null),
                    props.sessionTimeout(), this::tune, null).start());
        }
        running = true;
        LOG.info("tuner worker {} started ({} tasks at once)", id, props.concurrency());
    }

    /**
     * Why a task stops before its budget: cancelled through the API or claimed by another worker (acknowledge the
     * message), or its message went to another worker or this process is stopping ({@code redo}: leave the message
     * uncommitted, the task resumes from its records wherever it is delivered next).
     */
    private static final class Stopped extends RuntimeException {
        final boolean redo;

        Stopped(String why, boolean redo) {
            super(why, null, false, false);
            this.redo = redo;
        }
    }

    private void tune(ConsumerRecord<String, String> record, FarmConsumerLoop.Control control) {
        long taskId;
        try {
            taskId = FarmMessages.read(record.value(), TuningTaskMessage.class).taskId();
        } catch (IllegalArgumentException e) {
            LOG.error("tuning.tasks {}@{} is unreadable, skipped: {}", record.partition(), record.offset(), e.getMessage());
            return;
        }
        Optional<TaskRow> claimed = tasks.claim(taskId, id);
        if (claimed.isEmpty()) return; // ended already (a redelivery after it finished, or cancelled)
        TaskRow row = claimed.get();
        if (row.attempts() > 1) LOG.info("task {} ({}) resumed by {}: attempt {}", row.id(), row.workloadKey(), id, row.attempts());
        try {
            run(row, control);
        } catch (Stopped e) {
            LOG.info("task {} stopped: {}", row.id(), e.getMessage());
            if (e.redo) throw e;
        } catch (CancellationException e) {
            if (!control.revoked() && !control.stopping()) throw e;
        } catch (RuntimeException e) {
            if (control.revoked()) return;
            LOG.warn("task {} ({}) failed: {}", row.id(), row.workloadKey(), e.toString(), e);
            end(row, "FAILED", e.getMessage());
        }
    }

    private void run(TaskRow claimed, FarmConsumerLoop.Control control) {
        if (!devices.anyAlive(claimed.deviceClass())) {
            end(claimed, "FAILED", "no hardware agent of device class " + claimed.deviceClass() + " is ONLINE (GET /api/v1/devices; ./relayfarm agent starts one)");
            return;
        }
        if (VtaTarget.isVta(claimed.target())) {
            runVta(claimed, control);
            return;
        }
        Target target = Target.parse(claimed.target());
        IRModule module = ir.read(claimed.irRef());
        TuningTask task = Stages.tasks(module, target).stream().filter(t -> t.key().equals(claimed.workloadKey())).findFirst()
                .orElseThrow(() -> new IllegalStateException("module " + claimed.irRef() + " has no workload " + claimed.workloadKey() + " for " + claimed.target()));
        List<TuningRecord> earlier = records.of(claimed.workloadKey(), claimed.target(), claimed.deviceClass());
        String compiler = devices.compilerOf(claimed.deviceClass()).orElseGet(() -> earlier.isEmpty() ? "unknown" : earlier.getLast().compiler());
        Device device = devices.deviceOf(claimed.deviceClass()).orElseGet(() -> new Device(claimed.deviceClass(), "unknown", "unknown", List.of(), 1));
        RecordContext context = new RecordContext(claimed.target(), device, compiler, ArtifactCompiler.VERSION);
        RemoteMeasurer measurer = new RemoteMeasurer(claimed.id(), id, context, kafka, inbox, records, tx, lowering, props.measureTimeout(), claimed.irRef());
        TaskRow row = claimed;
        while (true) {
            // every record of the workload seeds the search (its configs are not proposed again); the budget counts this task's
            List<TuningRecord> prior = records.of(row.workloadKey(), row.target(), row.deviceClass()).stream().filter(x -> x.compiler().equals(compiler)).toList();
            int done = tasks.trials(row.id());
            int left = row.trialsBudget() - done;
            Duration time = row.deadline() == null ? null : Duration.between(Instant.now(), row.deadline());
            if (left <= 0 || time != null && (time.isNegative() || time.isZero())) {
                finish(row, task, compiler, (left <= 0 ? "trial budget spent (" : "time budget spent (") + done + " trials)", measurer);
                return;
            }
            TaskRow r = row;
            Tuner.Options options = new Tuner.Options(row.strategy(), row.batch(), left, time, props.seed() + row.id(), props.patience());
            Tuner tuner = new Tuner(measurer, context, null, options, (t, batch, status) -> {
                TaskScheduler.Progress p = status.tasks().getFirst();
                if (!tasks.progress(r.id(), r.attempts(), Double.isFinite(p.defaultUs()) ? OptionalDouble.of(p.defaultUs()) : OptionalDouble.empty())) {
                    throw new Stopped("cancelled, or claimed by another worker", false);
                }
                if (control.revoked()) throw new Stopped("its message went to another worker", true);
                if (control.stopping()) throw new Stopped("this worker is stopping; the task resumes on another", true);
            });
            Tuner.Result result = tuner.tune(List.of(task), Map.of(task.key(), row.calls()), prior);
            String note = result.notes().get(task.key());
            if (note != null) { // the search ended by itself (space exhausted, no improvement): no budget would change that
                finish(row, task, compiler, note + " (" + tasks.trials(row.id()) + " trials)", measurer);
                return;
            }
            // the budget is spent; a run that joined meanwhile may have raised it: read the row again
            row = tasks.find(row.id()).orElseThrow();
            if (!row.status().equals("RUNNING") || row.attempts() != claimed.attempts()) return;
        }
    }

    /**
     * A VTA layer task (target {@code vta-sim ...}): the library's {@link VtaTuner} walks the layer's schedule grid in
     * rounds of the task's batch, each measured by an FPGA agent of the class (cycles on the simulator, checked bit for
     * bit), resuming from the task's records. The trial budget bounds it; the time budget is not used (a round takes
     * milliseconds of simulation). At the end the best schedule, if it takes fewer cycles than the default, is proposed
     * PENDING like a CPU one, without a confirming re-measurement: simulated cycles are deterministic.
     */
    private void runVta(TaskRow row, FarmConsumerLoop.Control control) {
        VtaConfig config = VtaTarget.parse(row.target());
        if (!VtaTarget.deviceClass(config).equals(row.deviceClass())) {
            end(row, "FAILED", "target \"" + row.target() + "\" is simulated by device class " + VtaTarget.deviceClass(config) + ", the task asks " + row.deviceClass());
            return;
        }
        IRModule module = ir.read(row.irRef());
        VtaLayerTask task = VtaLayerTasks.find(module, config, row.workloadKey())
                .orElseThrow(() -> new IllegalStateException("module " + row.irRef() + " has no VTA layer of workload " + row.workloadKey()));
        RecordContext context = VtaTarget.context(config);
        RemoteMeasurer measurer = new RemoteMeasurer(row.id(), id, context, kafka, inbox, records, tx, lowering, props.measureTimeout(), row.irRef());
        List<TuningRecord> prior = vtaRecords(row);
        int left = row.trialsBudget() - tasks.trials(row.id());
        String note = "trial budget spent";
        if (left > 0) {
            VtaTuner tuner = new VtaTuner(measurer, null, new VtaTuner.Options(row.batch(), left), (t, batch) -> {
                if (!tasks.progress(row.id(), row.attempts(), OptionalDouble.of(batch.baselineUs()))) throw new Stopped("cancelled, or claimed by another worker", false);
                if (control.revoked()) throw new Stopped("its message went to another worker", true);
                if (control.stopping()) throw new Stopped("this worker is stopping; the task resumes on another", true);
            });
            VtaTuner.Outcome o = tuner.tune(List.of(task), prior).getFirst();
            if (o.defaultFailed()) {
                // an agent that cannot measure the task (refused it) or a default that does not run: no schedule can be checked
                end(row, "FAILED", o.note());
                return;
            }
            note = o.note();
        }
        List<TuningRecord> all = vtaRecords(row);
        String outcome = "; the default stays (nothing took fewer cycles)";
        Optional<TuningRecord> best = VtaRecords.best(task, all);
        if (best.isPresent() && best.get().defaultCostUs().isPresent() && best.get().costUs() < best.get().defaultCostUs().getAsDouble()) {
            TuningRecord b = best.get();
            Optional<Long> schedule = reviews.propose(row.id(), b, 1, id);
            outcome = String.format(Locale.ROOT, "; best %d cycles, default %d%s", VtaTarget.cycles(b.costUs()), VtaTarget.cycles(b.defaultCostUs().getAsDouble()),
                    schedule.map(s -> ": proposed schedule " + s).orElse(": a reviewed schedule stays"));
        }
        if (end(row, "DONE", note + " (" + tasks.trials(row.id()) + " trials)" + outcome)) LOG.info("VTA task {} ({}) done: {}{}", row.id(), row.workloadKey(), note, outcome);
    }

    /** The task's workload's records measured with this lowering (another version's cycles describe other programs). */
    private List<TuningRecord> vtaRecords(TaskRow row) {
        return records.of(row.workloadKey(), row.target(), row.deviceClass()).stream().filter(r -> r.compiler().equals(VtaTarget.LOWERING)).toList();
    }

    /**
     * DONE with {@code note}. The best config that beat its default (the library's rule, {@link RecordSchedules}) is
     * measured once more, against the default again, and proposed as a PENDING schedule only when that second
     * measurement beats the default too: the best of many noisy medians is biased low, and a reviewer (or the
     * auto-approve policy, which asks for two measurements) should see a cost that holds.
     */
    private void finish(TaskRow row, TuningTask task, String compiler, String note, RemoteMeasurer measurer) {
        String outcome = "; the default stays (nothing beat it)";
        Optional<TuningRecord> best = best(row, task, compiler);
        if (best.isPresent()) {
            ScheduleConfig config = best.get().config();
            Measurement again;
            try {
                again = measurer.measureWithBaseline(task, List.of(config)).results().getFirst();
            } catch (BaselineFailedException e) {
                again = e.baseline();
            }
            // the config's successful records, this re-measurement last: one read gives the confirmation and the count
            List<TuningRecord> measured = records.of(row.workloadKey(), row.target(), row.deviceClass()).stream()
                    .filter(r -> r.config().equals(config) && r.ok() && r.compiler().equals(compiler)).toList();
            if (again.ok() && !measured.isEmpty() && measured.getLast().fasterThanDefault()) {
                TuningRecord b = measured.getLast();
                int measurements = measured.size();
                Optional<Long> schedule = reviews.propose(row.id(), b, measurements, id);
                schedule.ifPresent(reviews::autoApproveIfEligible);
                outcome = schedule.map(s -> String.format(Locale.ROOT, "; proposed schedule %d (%.2fx the default, %d measurements)", s,
                        b.defaultCostUs().getAsDouble() / b.costUs(), measurements)).orElse("; a reviewed schedule stays");
            } else {
                outcome = "; the best (" + String.format(Locale.ROOT, "%.1f", best.get().costUs()) + " us) did not beat the default when measured again ("
                        + again.outcome() + "): the default stays";
            }
        }
        if (end(row, "DONE", note + outcome)) LOG.info("task {} ({}) done: {}{}", row.id(), row.workloadKey(), note, outcome);
    }

    /** The config the library's rule would apply from the workload's records: the cheapest, if it beat its default. */
    private Optional<TuningRecord> best(TaskRow row, TuningTask task, String compiler) {
        List<TuningRecord> all = records.of(row.workloadKey(), row.target(), row.deviceClass());
        return RecordSchedules.stored(all, compiler).stream().filter(s -> s.config().template().equals(task.template()))
                .map(s -> all.get((int) s.id() - 1)).findFirst();
    }

    /** Ends the task (if this worker still holds it) and refreshes the runs that hold it. */
    private boolean end(TaskRow row, String status, String note) {
        boolean ended = tasks.finish(row.id(), row.attempts(), status, note);
        for (long run : tasks.runs(row.id())) runs.refreshStatus(run);
        return ended;
    }

    @Override
    public void stop() {
        running = false;
        for (FarmConsumerLoop l : loops) l.close(props.drainTimeout());
        loops.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 100;
    }
}
