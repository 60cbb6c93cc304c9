package dev.relayfarm.services;

import dev.relayfarm.services.kit.Envelope;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.kit.KafkaTraceContext;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.NewJob;
import dev.relayfarm.services.store.PgBlobStore;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.springframework.kafka.core.KafkaTemplate;

/** Submits jobs the way the gateway does (blob, jobs row, QUEUED event, compile.requested), for stage tests. */
public final class TestJobs {
    private final PgBlobStore blobs;
    private final JobStore jobs;
    private final KafkaTemplate<String, String> kafka;
    private final OpenTelemetry otel;

    public TestJobs(PgBlobStore blobs, JobStore jobs, KafkaTemplate<String, String> kafka, OpenTelemetry otel) {
        this.blobs = blobs;
        this.jobs = jobs;
        this.kafka = kafka;
        this.otel = otel;
    }

    /** A submitted job: its id, the compile.requested envelope, and the trace id of its (gateway) root span. */
    public record Submitted(UUID id, Envelope request, String traceId) {}

    public Submitted submit(String name, String format, byte[] model, String target, int optLevel, String shapes) throws Exception {
        return submit(name, format, model, target, optLevel, shapes, "float");
    }

    /** A job with the {@code quantize} option ({@code float} or {@code int8}). */
    public Submitted submit(String name, String format, byte[] model, String target, int optLevel, String shapes, String quantize) throws Exception {
        String sha = blobs.put(model);
        UUID id = UUID.randomUUID();
        jobs.create(new NewJob(id, name, format, sha, target, optLevel, shapes, "apply", quantize, null, null, model.length));
        jobs.event(id, null, "QUEUED", JobStatus.QUEUED, null, null);
        Span root = otel.getTracer("test-gateway").spanBuilder("POST /api/v1/jobs").startSpan();
        try {
            String traceparent = KafkaTraceContext.inject(otel, Context.root().with(root)).get(KafkaTraceContext.TRACEPARENT);
            Envelope env = Envelopes.compileRequested(id, sha, name, format, target, optLevel, shapes, "apply", quantize, traceparent);
            send(Stage.IMPORTER.inputTopic, env);
            return new Submitted(id, env, root.getSpanContext().getTraceId());
        } finally {
            root.end();
        }
    }

    public void send(String topic, Envelope env) throws Exception {
        kafka.send(Envelopes.record(topic, env)).get();
    }

    public void sendRaw(String topic, String key, String value) throws Exception {
        kafka.send(new ProducerRecord<>(topic, key, value)).get();
    }

    public JobStatus awaitTerminal(UUID id, Duration timeout) throws InterruptedException {
        await(() -> jobs.status(id).map(JobStatus::terminal).orElse(false), timeout, "job " + id + " to finish");
        return jobs.status(id).orElseThrow();
    }

    public static void await(BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out after " + timeout + " waiting for " + what);
            Thread.sleep(100);
        }
    }
}
