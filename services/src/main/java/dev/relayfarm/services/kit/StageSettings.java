package dev.relayfarm.services.kit;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * How the stage services consume ({@code relayfarm.stage.*}).
 *
 * @param maxAttempts     tries of a message whose processing fails with a non-user error before it goes to the DLQ; counted
 *                        in PostgreSQL ({@code stage_attempts}) before each try, so tries that killed their thread or
 *                        process count too, and a restart never re-reads the same poison forever; a try whose handler
 *                        returned, or that a stop interrupted (or that threw while the service was stopping), is taken back
 * @param backoff         wait after the first failed try; doubled after each further one
 * @param maxBackoff      the longest wait between tries
 * @param concurrency     consumer threads per stage in this process (each one member of the stage's group)
 * @param pollTimeout     how long one poll waits for messages
 * @param shutdownTimeout how long closing the context waits for the messages in progress before interrupting them (they
 *                        stay uncommitted and are redone by the next consumer). ONE deadline for all consumer threads
 *                        of the process (local mode runs all five stages in one JVM); the threads still busy then are
 *                        interrupted together and waited for at most {@code cancelGrace} + 2 s more, so a stop takes
 *                        at most shutdownTimeout + cancelGrace + 2 s: 17 s with the defaults, inside Spring's 30 s per
 *                        lifecycle phase and a container platform's usual 30 s grace before SIGKILL. 10 s is long
 *                        enough for a short stage to finish; a long codegen is cheaper to redo than to wait for
 * @param maxPollInterval the broker's limit between polls: above the longest stage (codegen of a big model)
 * @param handlerStackSize the stack requested for the thread each handler runs on: defence in depth against deep
 *                        recursion in the library (a thread's stack is reserved, not committed, so 256 MB costs address
 *                        space, not memory); a StackOverflowError still only fails its job
 * @param cancelPoll      how often the job's status is read while its handler runs; a CANCELLED job's handler is
 *                        interrupted (gcc killed, the stage abandoned) within about this long
 * @param cancelGrace     how long an interrupted handler may take to stop before its thread is abandoned (it cannot be
 *                        killed) and the consumer moves on
 * @param watchdogInterval how often the watchdog checks the consumer threads (restarting a dead one) and refreshes
 *                        their row in {@code stage_consumers}, which the gateway's health reads
 */
@ConfigurationProperties("relayfarm.stage")
public record StageSettings(@DefaultValue("3") int maxAttempts, @DefaultValue("500ms") Duration backoff, @DefaultValue("10s") Duration maxBackoff,
                            @DefaultValue("1") int concurrency, @DefaultValue("500ms") Duration pollTimeout, @DefaultValue("10s") Duration shutdownTimeout,
                            @DefaultValue("15m") Duration maxPollInterval, @DefaultValue("256MB") DataSize handlerStackSize,
                            @DefaultValue("500ms") Duration cancelPoll, @DefaultValue("5s") Duration cancelGrace,
                            @DefaultValue("2s") Duration watchdogInterval) {
    public StageSettings {
        if (maxAttempts < 1) throw new IllegalArgumentException("relayfarm.stage.max-attempts must be >= 1, got " + maxAttempts);
        if (concurrency < 1) throw new IllegalArgumentException("relayfarm.stage.concurrency must be >= 1, got " + concurrency);
    }

    /** The wait after failed try number {@code attempt} (1-based): backoff * 2^(attempt-1), at most maxBackoff. */
    public Duration backoffAfter(int attempt) {
        long ms = backoff.toMillis() << Math.min(attempt - 1, 20);
        return Duration.ofMillis(Math.min(ms, maxBackoff.toMillis()));
    }
}
