package dev.relayfarm.services.kit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.pipeline.UserErrors;
import dev.relayfarm.services.store.ArtifactStore;
import dev.relayfarm.services.store.JobEvent;
import dev.relayfarm.services.store.JobRow;
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
import java.util.concurrent.TimeUnit;
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
 *   <li>else status = the stage's, event STARTED; run the handler — a user error fails the job at once,
 *       another error is retried with exponential backoff (event RETRY) and after the last attempt the
 *       message goes to the DLQ and the job FAILS with the stage's error;</li>
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

    StageProcessor(StageHandler handler, JobStore jobs, ArtifactStore artifacts, JobEvents events, KafkaTemplate<String, String> kafka, TransactionTemplate tx,
                   StageSettings settings, OpenTelemetry otel, StopSignal stop) {
        this.handler = handler;
        this.stage = handler.stage();
        this.jobs = jobs;
        this.artifacts = artifacts;
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
        JobEvent startedEvent = tx.execute(s -> jobs.advance(job.id(), stage.status)
                ? events.insert(job.id(), stage.wireName, "STARTED", stage.status, null, null) : null);
        if (startedEvent == null) return Outcome.DONE; // cancelled or failed since we read it
        events.publish(startedEvent);

        StageOutput out = null;
        int attempt = in.attempt();
        for (; out == null; attempt++) {
            try {
                out = handler.run(new StageInput(in, job, attempt));
                span.setAttribute("relayfarm.attempts", attempt);
                break;
            } catch (Exception e) {
                String message = message(e);
                if (UserErrors.isUserError(e)) {
                    LOG.info("job {}: {} failed (user error): {}", job.id(), stage.wireName, message);
                    span.setStatus(StatusCode.ERROR, message);
                    fail(job, message);
                    return Outcome.DONE;
                }
                if (attempt >= settings.maxAttempts()) {
                    LOG.warn("job {}: {} failed {} times, to {}: {}", job.id(), stage.wireName, attempt, stage.dlqTopic(), message, e);
                    span.recordException(e);
                    span.setStatus(StatusCode.ERROR, message);
                    deadLetter(rec, message, attempt);
                    fail(job, message);
                    return Outcome.DONE;
                }
                Duration wait = settings.backoffAfter(attempt);
                LOG.info("job {}: {} attempt {} failed, retrying in {} ms: {}", job.id(), stage.wireName, attempt, wait.toMillis(), message);
                int a = attempt;
                JobEvent retry = tx.execute(s -> events.insert(job.id(), stage.wireName, "RETRY", stage.status,
                        "attempt " + a + " of " + settings.maxAttempts() + " failed: " + message, null));
                events.publish(retry);
                if (!stop.sleep(wait)) return Outcome.REDELIVER;
                Optional<JobStatus> now = jobs.status(job.id());
                if (now.isEmpty() || now.get() == JobStatus.CANCELLED || now.get() == JobStatus.FAILED) return Outcome.DONE;
            }
        }
        return finish(job, out, attempt, started);
    }

    private Outcome finish(JobRow job, StageOutput out, int attempts, Instant started) throws Exception {
        long durationMs = Duration.between(started, Instant.now()).toMillis();
        ObjectNode payload = out.payload().deepCopy();
        List<JobEvent> done = new ArrayList<>();
        Map<String, String> trace = KafkaTraceContext.inject(otel, Context.current());
        Envelope produced = tx.execute(s -> {
            JobStatus status = jobs.status(job.id()).orElse(JobStatus.CANCELLED);
            if (status == JobStatus.CANCELLED || status == JobStatus.FAILED) return null; // cancelled while we worked: drop the output
            if (out.artifact().isPresent()) {
                StageOutput.BuiltArtifact a = out.artifact().get();
                long id = artifacts.insert(job.id(), a.contentHash(), a.tarSha256(), a.sizeBytes(), a.manifest());
                payload.put("artifactId", id);
            }
            Envelope env = new Envelope(job.id(), stage.wireName, 1, Envelope.SCHEMA_VERSION, out.irRef(), payload, trace.get(KafkaTraceContext.TRACEPARENT),
                    Instant.now());
            boolean mine = jobs.storeStageResult(job.id(), stage.wireName, Envelopes.MAPPER.valueToTree(env), attempts, started, durationMs);
            if (!mine) {
                // a concurrent delivery stored its result first: that one stands, ours is dropped
                return jobs.stageOutput(job.id(), stage.wireName).map(n -> treeToEnvelope(n)).orElseThrow();
            }
            done.add(events.insert(job.id(), stage.wireName, "FINISHED", status, null, durationMs));
            if (out.artifact().isPresent() && jobs.succeed(job.id())) {
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

    private void fail(JobRow job, String message) {
        JobEvent failed = tx.execute(s -> jobs.fail(job.id(), stage.wireName, message)
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
