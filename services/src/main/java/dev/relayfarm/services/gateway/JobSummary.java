package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.relayfarm.services.store.JobStatus;
import java.time.Instant;
import java.util.UUID;

/** One row of {@code GET /api/v1/jobs}: what a list needs, without per-stage detail. */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record JobSummary(UUID id, JobStatus status, String modelName, String modelFormat, String target, int optLevel,
                         Instant createdAt, Instant updatedAt, Instant finishedAt, String errorStage, String url) {}
