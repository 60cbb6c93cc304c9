package dev.relayfarm.services.kit;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * The wrapper of every pipeline message (ARCHITECTURE.md section 4; schema {@code schemas/messages/envelope.schema.json}).
 *
 * @param jobId         the job; also the Kafka record key, so one job's messages stay ordered on one partition
 * @param stage         the stage that produced this message ({@code "gateway"} for compile.requested)
 * @param attempt       1 on first delivery; the kit increments it when it retries
 * @param schemaVersion {@link #SCHEMA_VERSION} of the producer
 * @param irRef         {@code sha256} of the IR JSON document in the blob store (claim-check), null before import
 * @param payload       stage-specific fields (job options, schedules, artifact facts); see the schema per topic
 * @param traceparent   W3C trace context of the job's trace (also sent as the {@code traceparent} Kafka header)
 * @param producedAt    when the producer sent it
 */
public record Envelope(UUID jobId, String stage, int attempt, int schemaVersion, String irRef, JsonNode payload,
                       String traceparent, Instant producedAt) {
    public static final int SCHEMA_VERSION = 1;

    public Envelope {
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(stage, "stage");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(producedAt, "producedAt");
        if (attempt < 1) throw new IllegalArgumentException("attempt must be >= 1, got " + attempt);
    }
}
