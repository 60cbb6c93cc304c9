package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.relayfarm.services.store.JobStatus;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A job as {@code GET /api/v1/jobs/{id}} shows it (snake_case, like the submit's fields). {@code error} is set
 * only when FAILED, {@code artifact} only when SUCCEEDED; {@code stages} lists every stage that has started, in
 * pipeline order.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record JobView(UUID id, JobStatus status, Model model, String target, int optLevel, String shapes, String tune, String quantize,
                      Instant createdAt, Instant updatedAt, Instant finishedAt, String traceId,
                      List<StageTiming> stages, JobError error, Artifact artifact, Map<String, String> links) {

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Model(String name, String format, String sha256, long sizeBytes) {}

    /**
     * One stage's progress. {@code status}: RUNNING, FINISHED, FAILED, or CANCELLED (the job was cancelled while
     * the stage ran). {@code attempts} counts deliveries: 1 plus the stage's RETRY events.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record StageTiming(String stage, String status, Instant startedAt, Instant finishedAt, Long durationMs, int attempts) {}

    /** Where and why the job failed; {@code code} is the user error's diagnostic code, absent for an internal failure. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record JobError(String stage, String message, @JsonInclude(JsonInclude.Include.NON_NULL) String code) {}

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Artifact(String contentHash, String tarSha256, long sizeBytes, Instant createdAt, String url) {}
}
