package dev.relayfarm.services.gateway;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Settings of the REST gateway ({@code relayfarm.gateway.*}). The bearer token is {@code relayfarm.token}
 * (environment {@code RELAYFARM_TOKEN}) and local mode {@code relayfarm.local}: see {@link GatewayToken}.
 *
 * @param maxUploadSize    the largest model accepted; {@code application.properties} hands the same value to
 *                         Spring's multipart limits, whose overflow becomes a 413 problem
 * @param sendTimeout      how long a submit waits for Kafka to acknowledge compile.requested before failing the job
 * @param eventPoll        how often an open event stream looks for new job_events rows
 * @param eventStreamLimit how long one event stream stays open; a client resumes with {@code Last-Event-ID}
 * @param requeueAfter     a job still QUEUED this long after its submission gets its compile.requested again; each
 *                         further copy waits twice as long as the one before (60 s: copies at about 1, 3, 7 and 15
 *                         minutes after submission)
 * @param requeueCheck     how often the gateway looks for such jobs; 0 turns the check off
 * @param requeueMaxResends copies re-sent before the gateway gives up and FAILS the job, naming the likely cause (no
 *                         importer consuming). 4: with the doubling, a job waits about half an hour in all — longer than
 *                         any restart of the importer, short enough that nobody waits on a farm that is not running
 */
@ConfigurationProperties("relayfarm.gateway")
public record GatewayProperties(
        @DefaultValue("256MB") DataSize maxUploadSize,
        @DefaultValue("10s") Duration sendTimeout,
        @DefaultValue("250ms") Duration eventPoll,
        @DefaultValue("30m") Duration eventStreamLimit,
        @DefaultValue("60s") Duration requeueAfter,
        @DefaultValue("15s") Duration requeueCheck,
        @DefaultValue("4") int requeueMaxResends) {
}
