package dev.relayfarm.services.kit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.services.store.ArtifactStore;
import dev.relayfarm.services.store.BlobRefs;
import dev.relayfarm.services.store.IllegalJobTransition;
import dev.relayfarm.services.store.JobEvent;
import dev.relayfarm.services.store.JobRow;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What happens to one message of one stage (the contract of the farm brief):
 * <ol>
 *   <li>an unreadable envelope or an unknown job goes to the DLQ at once (no retry can fix it);</li>
 *   <li>a CANCELLED or FAILED job: nothing (the offset is committed);</li>
 *   <li>a stored result for (job, stage): re-send it and stop (redelivery is a no-op);</li>
 *   <li>else status = the stage's, event STARTED; count the attempt in {@code stage_attempts} (a message
 *       whose earlier attempts all died with their thread or process goes to the DLQ instead); run the
 *       handler on its own large-stack thread ({@link #runHandler}); an attempt whose handler returned is taken back
 *       at once (only attempts that never returned count toward that limit), and a handler that throws while the
 *       service is stopping counts as stopped (attempt taken back, no RETRY, the message redelivered) — an Error (StackOverflowError,
 *       OutOfMemoryError, ...) fails the job at once with a message in words and dead-letters the record,
 *       a user error fails the job at once, another exception is retried with exponential backoff (event
 *       RETRY) and after the last attempt the message goes to the DLQ and the job FAILS with the stage's
 *       error; a job cancelled meanwhile has its handler interrupted;</li>
 *   <li>in ONE transaction: stage_results + event FINISHED (+ for the last stage the artifacts row and
 *       SUCCEEDED); then the output is sent; the caller commits the offset afterwards.</li>
 * </ol>
 * Each message is one span (a child of the trace the message carries), and the output carries it on.
 */
final class StageProcessor {
    private static final Logger LOG = LoggerFactory.getLogger(StageProcessor.class);
    private static final long SEND_TIMEOUT_S = 30;

    /** What became of a message: done (commit its offset) or not (redeliver it: shutdown, infrastructure failure). */
    enum Outcome { DONE, REDELIVER }

    private final StageHandler handler;
    private final Stage stage;
    private final JobStore jobs;
    private final ArtifactStore artifacts;
    private final JobEvents events;
    private final KafkaTemplate<String, String> kafka;
    private final TransactionTemplate tx;
    private final StageSettings settings;
    private final OpenTelemetry otel;
    private final Tracer tracer;
    private final StopSignal stop;
    private final BlobRefs refs;

    StageProcessor(StageHandler handler, JobStore jobs, ArtifactStore artifacts, BlobRefs refs, JobEvents events, KafkaTemplate<String, String> kafka, TransactionTemplate tx,
                   StageSettings settings, OpenTelemetry otel, StopSignal stop) {
        this.handler = handler;
        this.stage = handler.stage();
        this.jobs = jobs;
        this.artifacts = artifacts;
        this.refs = refs;
        this.events = events;
        this.kafka = kafka;
        this.tx = tx;
        this.settings = settings;
        this.otel = otel;
        this.tracer = otel.getTracer("dev.relayfarm.services");
        this.stop = stop;
    }

    /** Signals the loop is stopping; backoff waits end early. */
    interface StopSignal {
        boolean stopping();

        /** Waits up to {@code d}; false when woken because the loop is stopping (or interrupted). */
        boolean sleep(Duration d);

        /** The job whose handler runs now, null when none (for health). */
        default void busy(java.util.UUID jobId) {}
    }

    Outcome process(ConsumerRecord<String, String> rec) throws Exception {
        Envelope in;
        try {
            in = Envelopes.read(rec.value());
        } catch (IllegalArgumentException e) {
            deadLetter(rec, "malformed envelope: " + e.getMessage(), 1);
            return Outcome.DONE;
        }
        Optional<JobRow> found = jobs.find(in.jobId());
        if (found.isEmpty()) {
            deadLetter(rec, "unknown job " + in.jobId(), 1);
            return Outcome.DONE;
        }
        JobRow job = found.get();
        if (job.status() == JobStatus.CANCELLED || job.status() == JobStatus.FAILED) {
            LOG.info("job {}: {} skipped, the job is {}", job.id(), stage.wireName, job.status());
            return Outcome.DONE;
        }
        Context parent = KafkaTraceContext.extract(otel, rec.headers(), in.traceparent());
        Span span = tracer.spanBuilder(stage.serviceName() + " " + stage.wireName).setParent(parent).setSpanKind(SpanKind.CONSUMER)
                .setAttribute("relayfarm.job.id", job.id().toString())
                .setAttribute("relayfarm.stage", stage.wireName)
                .setAttribute("relayfarm.model.name", job.modelName())
                .setAttribute("relayfarm.target", job.target())
                .setAttribute("messaging.system", "kafka")
                .setAttribute("messaging.destination.name", rec.topic())
                .setAttribute("messaging.kafka.message.offset", rec.offset())
                .startSpan();
        try (Scope ignored = span.makeCurrent()) {
            return work(rec, in, job, span);
        } catch (Exception | Error e) {
            span.recordException(e);
            span.setStatus(StatusCode.ERROR, String.valueOf(e.getMessage()));
            throw e;
        } finally {
            span.end();
        }
    }

    private Outcome work(ConsumerRecord<String, String> rec, Envelope in, JobRow job, Span span) throws Exception {
        Optional<JsonNode> stored = jobs.stageOutput(job.id(), stage.wireName);
        if (stored.isPresent()) {
            span.setAttribute("relayfarm.redelivered", true);
            LOG.info("job {}: {} already done, re-sending its stored output", job.id(), stage.wireName);
            send(Envelopes.MAPPER.treeToValue(stored.get(), Envelope.class));
            return Outcome.DONE;
        }
        jobs.traceId(job.id(), span.getSpanContext().getTraceId());
        Instant started = Instant.now();
        JobEvent startedEvent;
        try {
            startedEvent = tx.execute(s -> jobs.advance(job.id(), stage.status)
                    ? events.insert(job.id(), stage.wireName, "STARTED", stage.status, null, null) : null);
        } catch (IllegalJobTransition e) {
            // the job is past this stage, yet the stage has no result for it: a message no run of the pipeline sends
            deadLetter(rec, e.getMessage(), 1);
            return Outcome.DONE;
        }
        if (startedEvent == null) return Outcome.DONE; // cancelled or failed since we read it
        events.publish(startedEvent);

        StageOutput out;
        int attempt;
        while (true) {
            settleTakeBack(job.id());
            // counted (and committed) before the handler runs: an attempt that kills its thread or process counts too
            attempt = jobs.beginAttempt(job.id(), stage.wireName);
            if (attempt > settings.maxAttempts()) {
                String last = jobs.lastAttemptError(job.id(), stage.wireName).map(e -> "; the last error was: " + e).orElse("");
                String message = stage.wireName + " was started " + (attempt - 1) + " times on this job without finishing (the " + stage.serviceName()
                        + " service stopped or died during each attempt), so it is not tried again" + last;
                LOG.warn("job {}: {}", job.id(), message);
                span.setStatus(StatusCode.ERROR, message);
                deadLetter(rec, message, attempt - 1);
                fail(job, message, null);
                return Outcome.DONE;
            }
            HandlerRun run = runHandler(new StageInput(in, job, attempt), job.id());
            if (run instanceof HandlerRun.Threw t && stop.stopping()) {
                // the service is stopping and the handler threw meanwhile: most likely because of the stop (a JVM
                // shutdown hook kills running children such as gcc on SIGTERM, concurrently with this graceful stop),
                // so it is a stop, not a failed attempt: no RETRY or FAILED, the message is redelivered
                LOG.info("job {}: {} ended while the service was stopping ({}); left for redelivery", job.id(), stage.wireName, message(t.error()));
                run = new HandlerRun.Stopped();
            }
            if (run instanceof HandlerRun.Ok ok) {
                out = ok.output();
                span.setAttribute("relayfarm.attempts", attempt);
                // the handler returned: this attempt did not die, so it is taken back now. What may fail after it (the
                // transaction, the send) is the database's or the broker's trouble and is redelivered; a redelivery
                // counted again would end in "stopped or died during each attempt", which would be false
                takeBack(job.id());
                break;
            }
            if (run instanceof HandlerRun.Cancelled) {
                LOG.info("job {}: {} stopped, the job was cancelled or failed while it ran", job.id(), stage.wireName);
                span.setAttribute("relayfarm.cancelled", true);
                return Outcome.DONE;
            }
            if (run instanceof HandlerRun.Stopped) {
                // the service is shutting down (the handler was interrupted, or threw while the loop was stopping):
                // this attempt says nothing about the message, which is redelivered
                jobs.unbeginAttempt(job.id(), stage.wireName);
                return Outcome.REDELIVER;
            }
            Throwable e = ((HandlerRun.Threw) run).error();
            if (e instanceof Error err) {
                // StackOverflowError, OutOfMemoryError, LinkageError, AssertionError: a bug or a limit, not the network.
                // Retrying would hit it again (or take the service down with it): fail the job now, keep the record.
                String message = internalError(stage, err);
                LOG.error("job {}: {}", job.id(), message, err);
                span.recordException(err);
                span.setStatus(StatusCode.ERROR, message);
                jobs.attemptFailed(job.id(), stage.wireName, message);
                deadLetter(rec, message, attempt);
                fail(job, message, null);
                return Outcome.DONE;
            }
            String message = message(e);
            jobs.attemptFailed(job.id(), stage.wireName, message);
            if (e instanceof CompileError user) {
                LOG.info("job {}: {} failed (user error): {}", job.id(), stage.wireName, message);
                span.setStatus(StatusCode.ERROR, message);
                fail(job, message, user.diagnostic().code());
                return Outcome.DONE;
            }
            if (attempt >= settings.maxAttempts()) {
                LOG.warn("job {}: {} failed {} times, to {}: {}", job.id(), stage.wireName, attempt, stage.dlqTopic(), message, e);
                span.recordException(e);
                span.setStatus(StatusCode.ERROR, message);
                deadLetter(rec, message, attempt);
                fail(job, message, null);
                return Outcome.DONE;
            }
            Duration wait = settings.backoffAfter(attempt);
            LOG.info("job {}: {} attempt {} failed, retrying in {} ms: {}", job.id(), stage.wireName, attempt, wait.toMillis(), message);
            int a = attempt;
            JobEvent retry = tx.execute(s -> events.insert(job.id(), stage.wireName, "RETRY", stage.status,
                    "attempt " + a + " of " + settings.maxAttempts() + " failed: " + message, null));
            events.publish(retry);
            if (!stop.sleep(wait)) {
                return Outcome.REDELIVER;
            }
            Optional<JobStatus> now = jobs.status(job.id());
            if (now.isEmpty() || now.get() == JobStatus.CANCELLED || now.get() == JobStatus.FAILED) return Outcome.DONE;
        }
        return finish(job, out, attempt, started);
    }

    /**
     * Jobs of this consumer whose returned attempt could not be taken back (the database was away): taken back before
     * the job's next attempt here. A consumer thread that dies forgets them; that costs at most one attempt per job.
     */
    private final java.util.Set<java.util.UUID> owedTakeBacks = new java.util.HashSet<>();

    private void takeBack(java.util.UUID jobId) {
        try {
            jobs.unbeginAttempt(jobId, stage.wireName);
        } catch (RuntimeException e) {
            LOG.warn("job {}: {} attempt not taken back yet ({}); it is taken back before the next attempt", jobId, stage.wireName, e.toString());
            owedTakeBacks.add(jobId);
        }
    }

    private void settleTakeBack(java.util.UUID jobId) {
        if (owedTakeBacks.remove(jobId)) {
            try {
                jobs.unbeginAttempt(jobId, stage.wireName);
            } catch (RuntimeException e) {
                owedTakeBacks.add(jobId);
                throw e;
            }
        }
    }

    /** How a handler run ended. */
    sealed interface HandlerRun {
        record Ok(StageOutput output) implements HandlerRun {}

        /** It threw: any Throwable, Errors included. */
        record Threw(Throwable error) implements HandlerRun {}

        /** The job was cancelled (or failed) while it ran: the handler was interrupted. */
        record Cancelled() implements HandlerRun {}

        /** The service is stopping and would not wait any longer: the handler was interrupted. */
        record Stopped() implements HandlerRun {}
    }

    /**
     * Runs the handler on a thread of its own, with a large stack ({@link StageSettings#handlerStackSize}), while this
     * (the consumer's) thread watches it: whatever the handler throws comes back as a value, so no Throwable reaches
     * the consumer loop; every {@link StageSettings#cancelPoll} the job's status is read, and a job that became
     * CANCELLED or FAILED gets its handler interrupted (the library stops on interrupt: gcc is killed). A handler
     * that ignores the interrupt is abandoned after {@link StageSettings#cancelGrace}: a thread cannot be killed,
     * but the consumer need not wait for it. A fresh thread per run costs microseconds against a stage's
     * milliseconds to minutes, and an abandoned one never blocks the next message.
     */
    private HandlerRun runHandler(StageInput input, java.util.UUID jobId) {
        CompletableFuture<StageOutput> result = new CompletableFuture<>();
        Runnable body = Context.current().wrap(() -> {
            try {
                result.complete(handler.run(input));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        Thread worker = Thread.ofPlatform().name(Thread.currentThread().getName() + "-handler").daemon(true)
                .stackSize(settings.handlerStackSize().toBytes())
                // a Throwable thrown while reporting a Throwable (say, a second OutOfMemoryError) still ends the wait
                .uncaughtExceptionHandler((t, e) -> result.completeExceptionally(e))
                .unstarted(body);
        stop.busy(jobId);
        try {
            worker.start();
            while (true) {
                try {
                    return new HandlerRun.Ok(result.get(settings.cancelPoll().toMillis(), TimeUnit.MILLISECONDS));
                } catch (ExecutionException e) {
                    return new HandlerRun.Threw(e.getCause());
                } catch (TimeoutException e) {
                    if (ended(jobId)) {
                        stopHandler(worker, "the job was cancelled");
                        return new HandlerRun.Cancelled();
                    }
                }
            }
        } catch (InterruptedException e) {
            // StageRunners.stop interrupts this thread after relayfarm.stage.shutdown-timeout
            stopHandler(worker, "the service is stopping");
            return new HandlerRun.Stopped();
        } finally {
            stop.busy(null);
        }
    }

    private boolean ended(java.util.UUID jobId) {
        try {
            JobStatus s = jobs.status(jobId).orElse(JobStatus.CANCELLED);
            return s == JobStatus.CANCELLED || s == JobStatus.FAILED;
        } catch (RuntimeException e) {
            LOG.debug("job {}: status not readable while {} runs: {}", jobId, stage.wireName, e.toString());
            return false; // the database being away is no reason to stop the work
        }
    }

    private void stopHandler(Thread worker, String why) {
        worker.interrupt();
        try {
            worker.join(settings.cancelGrace());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (worker.isAlive()) {
            LOG.warn("{}: {}; its handler did not stop within {} of being interrupted and is abandoned", worker.getName(), why, settings.cancelGrace());
        } else {
            LOG.info("{}: {}; handler interrupted", worker.getName(), why);
        }
    }

    /**
     * The job's error for an Error thrown by a handler: what happened and what it likely means, in words, e.g.
     * "internal error in import: StackOverflowError — the model is nested too deeply or too large".
     */
    static String internalError(Stage stage, Error e) {
        String meaning = switch (e) {
            case StackOverflowError s -> "the model is nested too deeply or too large";
            case OutOfMemoryError o -> "the " + stage.serviceName() + " service ran out of memory (" + message(o)
                    + "); the model is too large for it, or it needs a larger heap (-Xmx)";
            case LinkageError l -> "the service's installation is broken (" + message(l) + "): a class or native library is missing or mismatched";
            case AssertionError a -> "an internal check of the compiler failed (" + message(a) + "): a compiler bug, please report it with the model";
            default -> message(e);
        };
        return "internal error in " + stage.wireName + ": " + e.getClass().getSimpleName() + " \u2014 " + meaning;
    }

    private Outcome finish(JobRow job, StageOutput out, int attempts, Instant started) throws Exception {
        long durationMs = Duration.between(started, Instant.now()).toMillis();
        Optional<StageOutput.BuiltArtifact> artifact = out instanceof StageOutput.Built b ? Optional.of(b.artifact()) : Optional.empty();
        List<JobEvent> done = new ArrayList<>();
        Map<String, String> trace = KafkaTraceContext.inject(otel, Context.current());
        Envelope produced = tx.execute(s -> {
            JobStatus status = jobs.status(job.id()).orElse(JobStatus.CANCELLED);
            if (status == JobStatus.CANCELLED || status == JobStatus.FAILED) return null; // cancelled while we worked: drop the output
            Payload payload = switch (out) {
                case StageOutput.Forward f -> f.payload();
                case StageOutput.Built b -> {
                    StageOutput.BuiltArtifact a = b.artifact();
                    long id = artifacts.insert(job.id(), a.contentHash(), a.tarSha256(), a.sizeBytes(), a.manifest());
                    yield new ArtifactPayload(a.contentHash(), a.tarSha256(), a.sizeBytes(), id);
                }
            };
            Envelope env = new Envelope(job.id(), stage.wireName, 1, Envelope.SCHEMA_VERSION, out.irRef(), payload, trace.get(KafkaTraceContext.TRACEPARENT),
                    Instant.now());
            boolean mine = jobs.storeStageResult(job.id(), stage.wireName, Envelopes.MAPPER.valueToTree(env), attempts, started, durationMs);
            if (!mine) {
                // a concurrent delivery stored its result first: that one stands, ours is dropped
                return jobs.stageOutput(job.id(), stage.wireName).map(n -> treeToEnvelope(n)).orElseThrow();
            }
            // what retention must keep while this job is kept (the IR, the tensors it names, the artifact)
            if (out.irRef() != null) refs.recordIr(job.id(), out.irRef());
            artifact.ifPresent(a -> refs.record(job.id(), List.of(a.tarSha256())));
            done.add(events.insert(job.id(), stage.wireName, "FINISHED", status, null, durationMs));
            if (artifact.isPresent() && jobs.succeed(job.id())) {
                done.add(events.insert(job.id(), stage.wireName, "SUCCEEDED", JobStatus.SUCCEEDED, null, null));
            }
            return env;
        });
        if (produced == null) {
            LOG.info("job {}: {} result dropped, the job was cancelled or failed meanwhile", job.id(), stage.wireName);
            return Outcome.DONE;
        }
        send(produced);
        events.publish(done.toArray(JobEvent[]::new));
        LOG.info("job {}: {} finished in {} ms", job.id(), stage.wireName, durationMs);
        return Outcome.DONE;
    }

    private static Envelope treeToEnvelope(JsonNode n) {
        try {
            return Envelopes.MAPPER.treeToValue(n, Envelope.class);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("stored stage output is not an envelope: " + e.getOriginalMessage(), e);
        }
    }

    /** The job FAILED at this stage; {@code code} is a user error's diagnostic code, null for an internal failure. */
    private void fail(JobRow job, String message, String code) {
        JobEvent failed = tx.execute(s -> jobs.fail(job.id(), stage.wireName, message, code)
                ? events.insert(job.id(), stage.wireName, "FAILED", JobStatus.FAILED, message, null) : null);
        events.publish(failed);
    }

    private void send(Envelope env) throws Exception {
        kafka.send(Envelopes.record(stage.outputTopic, env)).get(SEND_TIMEOUT_S, TimeUnit.SECONDS);
    }

    /** The original record, unchanged, on the stage's DLQ, with headers saying why and after how many attempts. */
    private void deadLetter(ConsumerRecord<String, String> rec, String reason, int attempts) throws Exception {
        ProducerRecord<String, String> r = new ProducerRecord<>(stage.dlqTopic(), rec.key(), rec.value());
        for (Header h : rec.headers()) r.headers().add(h);
        r.headers().add("relayfarm.error", reason.getBytes(StandardCharsets.UTF_8));
        r.headers().add("relayfarm.stage", stage.wireName.getBytes(StandardCharsets.UTF_8));
        r.headers().add("relayfarm.attempts", Integer.toString(attempts).getBytes(StandardCharsets.UTF_8));
        r.headers().add("relayfarm.source", (rec.topic() + "-" + rec.partition() + "@" + rec.offset()).getBytes(StandardCharsets.UTF_8));
        kafka.send(r).get(SEND_TIMEOUT_S, TimeUnit.SECONDS);
        LOG.warn("{}: record {}-{}@{} dead-lettered to {}: {}", stage.serviceName(), rec.topic(), rec.partition(), rec.offset(), stage.dlqTopic(), reason);
    }

    static String message(Throwable e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
    }
}
