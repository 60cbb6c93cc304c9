package dev.relayfarm.services.kit;

/**
 * One pipeline stage as a service: a bean (with {@link ServiceRole}) that turns an input message into an
 * output by calling the shared-ir stage function. Everything around it — consuming, idempotency,
 * retries, dead letters, job status and events, tracing — is the kit's ({@link StageRunners}).
 *
 * <p>Throwing fails this attempt: user errors ({@link dev.relayfarm.pipeline.UserErrors}) fail the job at
 * once, anything else is retried with backoff and then dead-lettered. Handlers must be safe to run again
 * for the same message (they only write content-addressed blobs).
 */
public interface StageHandler {
    Stage stage();

    StageOutput run(StageInput input) throws Exception;
}
