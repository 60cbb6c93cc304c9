package dev.relayfarm.services.store;

import java.util.UUID;

/**
 * A job as submitted, before its {@code jobs} row exists ({@link JobStore#create}: it starts QUEUED).
 *
 * @param traceId        the submit's trace, null when a stage is the first to see the job
 * @param tokenId        the client's token (quotas count per token), null when the gateway runs without one
 * @param modelSizeBytes the upload's size, counted against the token's stored-uploads quota
 */
public record NewJob(UUID id, String modelName, String modelFormat, String modelSha256, String target, int optLevel, String shapes, String tune,
                     String quantize, String traceId, String tokenId, long modelSizeBytes) {
    /** A job with {@code tune=apply} and {@code quantize=float} (the default options). */
    public NewJob(UUID id, String modelName, String modelFormat, String modelSha256, String target, int optLevel, String shapes, String traceId, String tokenId,
                  long modelSizeBytes) {
        this(id, modelName, modelFormat, modelSha256, target, optLevel, shapes, "apply", "float", traceId, tokenId, modelSizeBytes);
    }
}
