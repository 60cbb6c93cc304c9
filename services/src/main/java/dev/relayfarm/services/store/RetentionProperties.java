package dev.relayfarm.services.store;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How long the farm keeps the bytes of finished jobs ({@code relayfarm.retention.*}); see {@link RetentionSweeper}.
 *
 * @param finishedJobs  a job SUCCEEDED, FAILED or CANCELLED longer ago than this loses its upload, IR, tensors and
 *                      artifact (its row and events stay; its artifact answers 410 Gone). 7 days: a user who submits on
 *                      Friday still fetches the artifact or reads a failure on Monday, while uploads of up to 256 MB
 *                      each stop piling up in PostgreSQL forever
 * @param sweepInterval how often the sweeper runs; 0 turns it off. 1 hour: expiry is a matter of days, and one sweep
 *                      deletes what a whole hour of jobs left
 */
@ConfigurationProperties("relayfarm.retention")
public record RetentionProperties(@DefaultValue("7d") Duration finishedJobs, @DefaultValue("1h") Duration sweepInterval) {}
