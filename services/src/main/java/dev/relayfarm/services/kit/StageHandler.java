package dev.relayfarm.services.kit;

/**
 * One pipeline stage as a service: a bean (with {@link ServiceRole}) that turns an input message into an
 * output by calling the shared-ir stage function. Everything around it — consuming, idempotency,
 * retries, dead letters, job status and events, tracing — is the kit's ({@link StageRunners}).
 *
 * <p>Throwing fails this attempt: user errors ({@link dev.relayfarm.diagnostic.CompileError}s) fail the job at
 * once, an {@link Error} (StackOverflowError, OutOfMemoryError, ...) fails it at once with a message in words
 * and dead-letters the record, any other exception is retried with backoff and then dead-lettered. Handlers
 * must be safe to run again for the same message (they only write content-addressed blobs).
 *
 * <p>{@link #run} is called on a thread of its own with a large stack, and that thread is interrupted when the
 * job is cancelled or the service stops: a handler that waits (a compiler process, a sleep) should stop on
 * interrupt, by throwing.
 */
public interface StageHandler {
    Stage stage();

    StageOutput run(StageInput input) throws Exception;
}
