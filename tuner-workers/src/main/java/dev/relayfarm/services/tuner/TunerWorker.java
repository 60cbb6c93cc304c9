package dev.relayfarm.services.tuner;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.store.Devices;
import dev.relayfarm.services.farm.FarmConsumerLoop;
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
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordSet;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.tuning.scheduler.TaskScheduler;
import dev.relayfarm.tuning.scheduler.Tuner;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;
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
 * is proposed as a PENDING schedule.
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
        this.id = "worker-" + host() + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 6);
    }

    private static String host() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
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

    /** Why a task stops before its budget: cancelled through the API, or its message went to another worker. */
    private static final class Stopped extends RuntimeException {
        Stopped(String why) {
            super(why, null, false, false);
        }
    }

    private void tune(ConsumerRecord<String, String> record, BooleanSupplier revoked) {
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
            run(row, revoked);
        } catch (Stopped e) {
            LOG.info("task {} stopped: {}", row.id(), e.getMessage());
        } catch (CancellationException e) {
            if (!revoked.getAsBoolean()) throw e;
        } catch (RuntimeException e) {
            if (revoked.getAsBoolean()) return;
            LOG.warn("task {} ({}) failed: {}", row.id(), row.workloadKey(), e.toString(), e);
            tasks.finish(row.id(), "FAILED", e.getMessage());
            for (long run : tasks.runs(row.id())) runs.refreshStatus(run);
        }
    }

    private void run(TaskRow claimed, BooleanSupplier revoked) {
        Target target = Target.parse(claimed.target());
        IRModule module = ir.read(claimed.irRef());
        TuningTask task = Stages.tasks(module, target).stream().filter(t -> t.key().equals(claimed.workloadKey())).findFirst()
                .orElseThrow(() -> new IllegalStateException("module " + claimed.irRef() + " has no workload " + claimed.workloadKey() + " for " + claimed.target()));
        TaskRow row = claimed;
        while (true) {
            List<TuningRecord> all = records.of(row.workloadKey(), row.target(), row.deviceClass());
            String compiler = devices.compilerOf(row.deviceClass()).orElseGet(() -> all.isEmpty() ? "unknown" : all.getLast().compiler());
            TaskRow r = row;
            Device device = devices.deviceOf(row.deviceClass()).orElseGet(() -> new Device(r.deviceClass(), "unknown", "unknown", List.of(), 1));
            RecordContext context = new RecordContext(row.target(), device, compiler, ArtifactCompiler.VERSION);
            List<TuningRecord> prior = all.stream().filter(x -> x.compiler().equals(compiler)).toList();
            int done = (int) prior.stream().filter(x -> !x.config().equals(task.defaultConfig())).map(TuningRecord::config).distinct().count();
            int left = row.trialsBudget() - done;
            Duration time = row.deadline() == null ? null : Duration.between(Instant.now(), row.deadline());
            if (left <= 0 || time != null && (time.isNegative() || time.isZero())) {
                finish(row, task, compiler, left <= 0 ? "trial budget spent (" + done + " trials)" : "time budget spent (" + done + " trials)");
                return;
            }
            RemoteMeasurer measurer = new RemoteMeasurer(row.id(), id, context, kafka, inbox, records, tx, lowering, props.measureTimeout());
            Tuner.Options options = new Tuner.Options(row.strategy(), row.batch(), left, time, props.seed() + row.id(), props.patience());
            Tuner tuner = new Tuner(measurer, context, null, options, (t, batch, status) -> {
                TaskScheduler.Progress p = status.tasks().getFirst();
                List<TuningRecord> now = records.of(r.workloadKey(), r.target(), r.deviceClass());
                tasks.progress(r.id(), done + status.trials(), Double.isFinite(p.defaultUs()) ? OptionalDouble.of(p.defaultUs()) : OptionalDouble.empty(),
                        best(now, task, compiler));
                if (revoked.getAsBoolean()) throw new Stopped("its message went to another worker");
                if ("CANCELLED".equals(tasks.status(r.id()))) throw new Stopped("cancelled");
            });
            Tuner.Result result = tuner.tune(List.of(task), Map.of(task.key(), row.calls()), prior);
            String note = result.notes().get(task.key());
            if (note != null) { // the search ended by itself (space exhausted, no improvement): no budget would change that
                finish(row, task, compiler, note + " (" + (done + result.status().trials()) + " trials)");
                return;
            }
            // the budget is spent; a run that joined meanwhile may have raised it: read the row again
            row = tasks.find(row.id()).orElseThrow();
            if (!row.status().equals("RUNNING")) return;
        }
    }

    /** The cheapest successful record of the task's template measured with {@code compiler}. */
    private static Optional<TuningRecord> best(List<TuningRecord> all, TuningTask task, String compiler) {
        return RecordSet.cheapest(all.stream().filter(r -> r.compiler().equals(compiler) && r.template().equals(task.template())).toList());
    }

    /** DONE with {@code note}; the best record proposed as the schedule when it beat its default. */
    private void finish(TaskRow row, TuningTask task, String compiler, String note) {
        List<TuningRecord> all = records.of(row.workloadKey(), row.target(), row.deviceClass());
        Optional<TuningRecord> best = best(all, task, compiler);
        String proposed = "";
        if (best.isPresent() && best.get().fasterThanDefault()) {
            TuningRecord b = best.get();
            int measurements = (int) all.stream().filter(r -> r.ok() && r.config().equals(b.config()) && r.compiler().equals(compiler)).count();
            long recordId = tasks.recordId(row.id(), b).orElse(0L);
            Optional<Long> schedule = reviews.propose(row.id(), b, recordId == 0 ? null : recordId, measurements, id);
            schedule.ifPresent(reviews::autoApproveIfEligible);
            proposed = schedule.map(s -> "; proposed schedule " + s + String.format(java.util.Locale.ROOT, " (%.2fx the default)",
                    b.defaultCostUs().getAsDouble() / b.costUs())).orElse("; best unchanged");
        } else {
            proposed = "; the default stays (nothing beat it)";
        }
        tasks.finish(row.id(), "DONE", note + proposed);
        for (long run : tasks.runs(row.id())) runs.refreshStatus(run);
        LOG.info("task {} ({}) done: {}{}", row.id(), row.workloadKey(), note, proposed);
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
