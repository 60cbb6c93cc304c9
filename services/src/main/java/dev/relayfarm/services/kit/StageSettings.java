package dev.relayfarm.services.kit;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the stage services consume ({@code relayfarm.stage.*}).
 *
 * @param maxAttempts     tries of a message whose processing fails with a non-user error before it goes to the DLQ
 * @param backoff         wait after the first failed try; doubled after each further one
 * @param maxBackoff      the longest wait between tries
 * @param concurrency     consumer threads per stage in this process (each one member of the stage's group)
 * @param pollTimeout     how long one poll waits for messages
 * @param shutdownTimeout how long closing the context waits for a message in progress before interrupting it
 * @param maxPollInterval the broker's limit between polls: above the longest stage (codegen of a big model)
 */
@ConfigurationProperties("relayfarm.stage")
public record StageSettings(@DefaultValue("3") int maxAttempts, @DefaultValue("500ms") Duration backoff, @DefaultValue("10s") Duration maxBackoff,
                            @DefaultValue("1") int concurrency, @DefaultValue("500ms") Duration pollTimeout, @DefaultValue("60s") Duration shutdownTimeout,
                            @DefaultValue("15m") Duration maxPollInterval) {
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
