package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.services.store.Devices;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.store.JobModule;
import dev.relayfarm.services.store.NewTuningRun;
import dev.relayfarm.services.store.RunWorkload;
import dev.relayfarm.services.store.TuningRunCreated;
import dev.relayfarm.services.store.TuningRuns;
import dev.relayfarm.services.store.TuningTasks;
import dev.relayfarm.tuning.search.SearchStrategies;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Component;

/**
 * {@code POST /api/v1/tuning-runs}: checks the request, finds the job's optimized module, records the run with
 * {@link TuningRuns#create} and announces each task it created on {@value FarmTopics#TUNING_TASKS} (tasks it joined
 * were announced by the run that created them).
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class TuningRunRequests {
    private static final Logger log = LoggerFactory.getLogger(TuningRunRequests.class);
    static final String DEFAULT_STRATEGY = "xgb";
    static final int DEFAULT_TRIALS_PER_TASK = 32;
    static final int MAX_TRIALS_PER_TASK = 100_000;
    /** Longer than any tuning anyone means to wait for: a typo ("5000h") is refused, not queued for months. */
    static final Duration MAX_BUDGET = Duration.ofDays(7);

    private final TuningRuns runs;
    private final TuningTasks tasks;
    private final Devices devices;
    private final IrStore ir;
    private final KafkaTemplate<String, String> kafka;
    private final GatewayProperties props;

    public TuningRunRequests(TuningRuns runs, TuningTasks tasks, Devices devices, IrStore ir, KafkaTemplate<String, String> kafka, GatewayProperties props) {
        this.runs = runs;
        this.tasks = tasks;
        this.devices = devices;
        this.ir = ir;
        this.kafka = kafka;
        this.props = props;
    }

    /** A valid request, before the job is looked at. */
    record Request(UUID jobId, Duration budget, String strategy, String deviceClass, int trialsPerTask) {}

    Request check(JsonBody body) {
        String job = body.text("jobId").orElseThrow(() -> bad("'jobId' is required: the job whose optimized module is tuned"));
        UUID jobId;
        try {
            jobId = JobsController.jobId(job.trim());
        } catch (ApiProblem e) {
            throw bad("'jobId' must be a job id (a UUID), got '" + job + "'");
        }
        Duration budget = budget(body.text("budget").orElseThrow(() -> bad("'budget' is required: wall-clock time for the run, e.g. \"90s\", \"5m\" or \"PT1H\"")));
        String strategy = body.text("strategy").map(s -> s.trim().toLowerCase(Locale.ROOT)).orElse(DEFAULT_STRATEGY);
        if (!SearchStrategies.NAMES.contains(strategy)) {
            throw bad("'strategy' must be one of " + String.join(", ", SearchStrategies.NAMES) + ", got '" + strategy + "'");
        }
        String deviceClass = body.text("deviceClass").map(String::trim).filter(s -> !s.isEmpty())
                .orElseThrow(() -> bad("'deviceClass' is required: the device class to tune for (GET /api/v1/devices lists them)"));
        List<String> classes = devices.classes();
        if (!classes.contains(deviceClass)) {
            throw bad("no device of class '" + deviceClass + "' has registered; " + (classes.isEmpty() ? "no device has registered yet"
                    : "the classes there are: " + String.join(", ", classes)));
        }
        int trials = body.integer("trialsPerTask", 1, MAX_TRIALS_PER_TASK).orElse(DEFAULT_TRIALS_PER_TASK);
        return new Request(jobId, budget, strategy, deviceClass, trials);
    }

    /** "90s", "5m", "2h", "500ms", or ISO-8601 ("PT90S"); positive, at most {@link #MAX_BUDGET}. */
    static Duration budget(String text) {
        String t = text.trim();
        Duration d;
        try {
            if (t.matches("\\d+")) throw new IllegalArgumentException("no unit");
            d = DurationStyle.detectAndParse(t);
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw bad("'budget' must be a duration with a unit (\"90s\", \"5m\", \"2h\") or ISO-8601 (\"PT90S\"), got '" + text + "'");
        }
        if (d.isNegative() || d.isZero() || d.compareTo(MAX_BUDGET) > 0) {
            throw bad("'budget' must be positive and at most " + MAX_BUDGET.toDays() + " days, got '" + text + "'");
        }
        return d;
    }

    /**
     * {@code POST /api/v1/tuning-runs}'s body (JSON text) checked and created: the API and the dashboard's start form
     * make a run the one same way.
     */
    public TuningRunCreated create(ObjectMapper json, String body, Caller caller) {
        return create(check(JsonBody.parse(json, body, ProblemType.BAD_TUNING_RUN)), caller);
    }

    /** The same request already as a JSON object (the dashboard's form fields), checked the same way. */
    public TuningRunCreated create(ObjectNode body, Caller caller) {
        return create(check(JsonBody.of(body, ProblemType.BAD_TUNING_RUN)), caller);
    }

    /** Records the run and announces its new tasks. A 503 if Kafka does not take them: the run is then cancelled. */
    TuningRunCreated create(Request r, Caller caller) {
        JobModule job = runs.jobModule(r.jobId(), Stage.OPTIMIZER.wireName).orElseThrow(() -> ApiProblem.jobNotFound(r.jobId()));
        if (job.optimizedIrRef() == null) {
            throw new ApiProblem(ProblemType.JOB_NOT_OPTIMIZED, "job " + r.jobId() + " is " + job.status() + " and has no optimized module"
                    + (job.status().equals("FAILED") || job.status().equals("CANCELLED") ? "; it ended before the optimizer finished"
                    : " yet; a tuning run can start once the job is past the optimizer (status TUNING or later)"));
        }
        Target target = Target.parse(job.target());
        IRModule module;
        try {
            module = ir.read(job.optimizedIrRef());
        } catch (RuntimeException e) {
            throw new ApiProblem(ProblemType.JOB_NOT_OPTIMIZED, "the optimized module of job " + r.jobId() + " can no longer be read ("
                    + e.getMessage() + "); retention deletes the bytes of old jobs: submit the model again");
        }
        List<RunWorkload> workloads = TuningRuns.workloads(module, target);
        TuningRunCreated created = runs.create(new NewTuningRun(r.jobId(), job.modelName(), job.optimizedIrRef(), target.toString(), r.deviceClass(),
                r.strategy(), r.budget(), r.trialsPerTask(), caller.name(), workloads));
        try {
            List<Long> announce = new java.util.ArrayList<>(created.newTaskIds());
            announce.addAll(created.joinedTaskIds()); // a joined task still PENDING may never have been announced (a lost send); duplicates are harmless
            for (long task : tasks.announceOrder(announce)) announce(task);
        } catch (SendFailed e) {
            log.error("tuning run {}: {}", created.runId(), e.getMessage(), e);
            runs.cancel(created.runId());
            throw new ApiProblem(ProblemType.QUEUE_UNAVAILABLE, "tuning run " + created.runId() + " was recorded but its tasks could not be queued,"
                    + " so it is CANCELLED: " + e.getMessage());
        }
        log.info("tuning run {} of job {} ({}) for {} / {} by {}: {} workloads, {} new tasks, {} joined, budget {}, {} trials each, {}",
                created.runId(), r.jobId(), job.modelName(), target, r.deviceClass(), caller.name(), workloads.size(), created.newTaskIds().size(),
                created.joinedTaskIds().size(), r.budget(), r.trialsPerTask(), r.strategy());
        return created;
    }

    /** Sends the task's message and waits for the broker (bounded by {@code relayfarm.gateway.send-timeout}). */
    private void announce(long task) {
        try {
            kafka.send(FarmTopics.tuningTask(task)).get(props.sendTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new SendFailed("Kafka refused " + FarmTopics.TUNING_TASKS + " for task " + task + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new SendFailed("Kafka did not acknowledge " + FarmTopics.TUNING_TASKS + " for task " + task + " within " + props.sendTimeout(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SendFailed("interrupted while sending " + FarmTopics.TUNING_TASKS, e);
        }
    }

    private static ApiProblem bad(String detail) {
        return new ApiProblem(ProblemType.BAD_TUNING_RUN, detail);
    }

    private static final class SendFailed extends RuntimeException {
        SendFailed(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
