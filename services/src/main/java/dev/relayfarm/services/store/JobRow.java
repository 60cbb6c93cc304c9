package dev.relayfarm.services.store;

import dev.relayfarm.services.store.JobStatus;
import java.time.Instant;
import java.util.UUID;

/**
 * A {@code jobs} row as the stages and the gateway read it.
 *
 * @param modelSizeBytes the upload's size (for rows from before that column: its blob's, 0 once the blob is gone)
 * @param finishedAt     null until the job is terminal
 */
public record JobRow(UUID id, JobStatus status, String modelName, String modelFormat, String modelSha256, long modelSizeBytes, String target,
                     int optLevel, String shapes, String tune, String quantize, String errorStage, String errorMessage, String errorCode, String traceId, Instant createdAt, Instant updatedAt,
                     Instant finishedAt) {}
