package dev.relayfarm.services.kit;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * The wrapper of every pipeline message (ARCHITECTURE.md section 4; schema {@code schemas/messages/envelope.schema.json}).
 *
 * @param jobId         the job; also the Kafka record key, so one job's messages stay ordered on one partition
 * @param stage         the stage that produced this message ({@link Stage#GATEWAY} for compile.requested)
 * @param attempt       1 on first delivery; the kit increments it when it retries
 * @param schemaVersion {@link #SCHEMA_VERSION} of the producer
 * @param irRef         {@code sha256} of the IR JSON document in the blob store (claim-check), null before import
 * @param payload       the topic's payload record ({@link Payload#producedBy} the producer stage)
 * @param traceparent   W3C trace context of the job's trace (also sent as the {@code traceparent} Kafka header)
 * @param producedAt    when the producer sent it
 */
public record Envelope(UUID jobId, String stage, int attempt, int schemaVersion, String irRef, Payload payload,
                       String traceparent, Instant producedAt) {
    public static final int SCHEMA_VERSION = 1;

    public Envelope {
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(stage, "stage");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(producedAt, "producedAt");
        if (attempt < 1) throw new IllegalArgumentException("attempt must be >= 1, got " + attempt);
    }

    /**
     * The JSON form read back: the version is checked before the payload is read, and the payload's record follows from
     * the producer (the JSON names no type).
     */
    @JsonCreator
    static Envelope fromJson(@JsonProperty("jobId") UUID jobId, @JsonProperty("stage") String stage, @JsonProperty("attempt") int attempt,
                             @JsonProperty("schemaVersion") int schemaVersion, @JsonProperty("irRef") String irRef,
                             @JsonProperty("payload") JsonNode payload, @JsonProperty("traceparent") String traceparent,
                             @JsonProperty("producedAt") Instant producedAt) throws JsonProcessingException {
        if (schemaVersion != SCHEMA_VERSION) {
            throw new IllegalArgumentException("envelope schemaVersion " + schemaVersion + " is not supported (this service reads " + SCHEMA_VERSION + ")");
        }
        Objects.requireNonNull(stage, "stage");
        if (payload == null || !payload.isObject()) throw new IllegalArgumentException("payload must be an object, got " + payload);
        return new Envelope(jobId, stage, attempt, schemaVersion, irRef, Envelopes.MAPPER.treeToValue(payload, Payload.producedBy(stage)), traceparent,
                producedAt);
    }
}
