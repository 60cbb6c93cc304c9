package dev.relayfarm.services.kit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The envelope's JSON form (schema {@code schemas/messages/envelope.schema.json}): field names as in
 * {@link Envelope}, {@code producedAt} as an ISO-8601 instant, {@code irRef} null before import, the payload as its
 * record ({@link Payload}). Reading rejects unknown and missing fields and other schema versions, so a producer/consumer
 * mismatch is a clear error (and a dead letter) rather than a silently misread message.
 */
public final class Envelopes {
    /** The mapper for messages: also what the kit uses for payloads and events. */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            // a payload field left out is an error, not a 0 or a null read as a value
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .build();

    private Envelopes() {}

    /**
     * A job's compile.requested envelope (schema {@code compile.requested.schema.json}): the model blob and the
     * job's options, no IR yet. The gateway sends it; the importer reads it.
     */
    public static Envelope compileRequested(UUID jobId, String modelSha256, String modelName, String format, String target, int optLevel,
                                            String shapes, String traceparent) {
        return compileRequested(jobId, modelSha256, modelName, format, target, optLevel, shapes, TuneOption.APPLY.toString(), "float", traceparent);
    }

    /** {@link #compileRequested} with the job's {@code tune} option ({@link TuneOption}) and {@code quantize} ({@code float} or {@code int8}). */
    public static Envelope compileRequested(UUID jobId, String modelSha256, String modelName, String format, String target, int optLevel,
                                            String shapes, String tune, String quantize, String traceparent) {
        JobPayload payload = new JobPayload(new JobModel(modelSha256, modelName, format), new JobOptions(target, optLevel, shapes, tune, quantize));
        return new Envelope(jobId, Stage.GATEWAY, 1, Envelope.SCHEMA_VERSION, null, payload, traceparent, Instant.now());
    }

    /**
     * The Kafka record of {@code e} on {@code topic}: key = the job id (one job's messages stay ordered on one
     * partition), value = the envelope's JSON, and its trace context also as the {@code traceparent} header.
     */
    public static ProducerRecord<String, String> record(String topic, Envelope e) {
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, e.jobId().toString(), write(e));
        if (e.traceparent() != null) r.headers().add(KafkaTraceContext.TRACEPARENT, e.traceparent().getBytes(StandardCharsets.UTF_8));
        return r;
    }

    public static String write(Envelope e) {
        try {
            return MAPPER.writeValueAsString(e);
        } catch (JsonProcessingException ex) {
            throw new IllegalStateException("an envelope is plain data and always serializes", ex);
        }
    }

    /** Parses a message value; an {@link IllegalArgumentException} says what is wrong with it. */
    public static Envelope read(String json) {
        if (json == null) throw new IllegalArgumentException("empty message value (expected an envelope)");
        Envelope e;
        try {
            e = MAPPER.readValue(json, Envelope.class);
        } catch (ValueInstantiationException ex) {
            // Envelope.fromJson refused it (a schema version we do not read, no stage, no payload): its own words
            if (ex.getCause() instanceof IllegalArgumentException || ex.getCause() instanceof NullPointerException) {
                throw new IllegalArgumentException(ex.getCause().getMessage(), ex);
            }
            throw new IllegalArgumentException("not an envelope: " + ex.getOriginalMessage(), ex);
        } catch (JsonProcessingException ex) {
            throw new IllegalArgumentException("not an envelope: " + ex.getOriginalMessage(), ex);
        }
        if (e == null) throw new IllegalArgumentException("not an envelope: null");
        return e;
    }
}
