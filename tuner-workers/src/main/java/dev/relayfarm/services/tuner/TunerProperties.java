package dev.relayfarm.services.tuner;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * A tuner worker's settings ({@code relayfarm.tuner.*}).
 *
 * @param concurrency    tasks one worker tunes at once: each has one batch at an agent at a time, so this many keeps
 *                       that many agents busy
 * @param measureTimeout how long a batch may wait for its result (queued behind other batches, moved to another
 *                       agent after a crash) before the task fails
 * @param sessionTimeout the Kafka group session: after a worker's SIGKILL, how soon its tasks go to another worker
 * @param drainTimeout   on SIGTERM, how long the round in progress may take to end (the task stops after it and resumes
 *                       on another worker); past it the round is interrupted
 * @param patience       a task ends after this many trials without improvement ({@code relayc tune --patience})
 * @param seed           the searches' seed (each task adds its id)
 */
@ConfigurationProperties("relayfarm.tuner")
public record TunerProperties(@DefaultValue("2") int concurrency, @DefaultValue("10m") Duration measureTimeout, @DefaultValue("10s") Duration sessionTimeout,
                              @DefaultValue("30s") Duration drainTimeout, @DefaultValue("64") int patience, @DefaultValue("1") long seed) {}
