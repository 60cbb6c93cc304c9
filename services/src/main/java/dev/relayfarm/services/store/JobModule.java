package dev.relayfarm.services.store;

import java.util.UUID;

/**
 * A job as a tuning run starts from it: its status, model, target and the optimized module the optimizer stage stored
 * ({@code stage_results.output->>'irRef'}), null while the job has not got that far.
 */
public record JobModule(UUID jobId, String status, String modelName, String target, String optimizedIrRef) {
}
