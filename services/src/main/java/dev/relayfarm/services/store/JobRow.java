package dev.relayfarm.services.store;

import dev.relayfarm.services.kit.JobStatus;
import java.util.UUID;

/** The fields of a {@code jobs} row the stages read. */
public record JobRow(UUID id, JobStatus status, String modelName, String modelFormat, String modelSha256, String target, int optLevel,
                     String shapes, String errorStage, String errorMessage) {}
