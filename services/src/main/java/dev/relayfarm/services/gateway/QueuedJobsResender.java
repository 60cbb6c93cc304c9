package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageSettings;
import dev.relayfarm.services.store.StageConsumers;
import dev.relayfarm.services.store.JobRow;
import dev.relayfarm.services.store.JobStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.stereotype.Component;

/**
 * Re-sends compile.requested for jobs still QUEUED {@code relayfarm.gateway.requeue-after} after submission. A
 * gateway that stops between committing a job and Kafka's acknowledgement leaves the job recorded but never sent;
 * every gateway instance re-sends such jobs, and a copy the importer already has is a no-op there (stage results
 * are kept per (job, stage)), so a late original costs nothing. A re-sent message starts a new trace.
 *
 * <p>A job that stays QUEUED after a copy was sent is most likely waiting for an importer that is not running, and
 * every copy is work for each stage once one runs again. So copies back off — each waits twice as long as the one
 * before, counted in {@code jobs.resend_count} / {@code last_sent_at} so a gateway restart does not start over — and
 * after {@code requeue-max-resends} copies the job FAILS with a reason that names the likely cause — unless an importer
 * consumer is alive ({@code stage_consumers}, as the health endpoint reads it): then the importer is busy with a
 * backlog, the job's message is in it, and the job keeps waiting (checked again after the last backoff). A copy the
 * broker refused ({@link CompileRequests.SendFailed}) is not counted: a broker outage must not use up the copies.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class QueuedJobsResender implements InitializingBean, DisposableBean {
    private static final Logger LOG = LoggerFactory.getLogger(QueuedJobsResender.class);
    private static final int BATCH = 100;

    private final JobStore jobs;
    private final JobRepository repository;
    private final CompileRequests requests;
    private final GatewayProperties props;
    private final StageConsumers consumers;
    private final Duration recent;
    private ScheduledExecutorService timer;

    public QueuedJobsResender(JobStore jobs, JobRepository repository, CompileRequests requests, GatewayProperties props, StageConsumers consumers,
                              StageSettings settings) {
        this.jobs = jobs;
        this.repository = repository;
        this.requests = requests;
        this.props = props;
        this.consumers = consumers;
        // as the health endpoint: three missed watchdog rounds (at least 5 s) and a consumer counts as gone
        Duration rounds = settings.watchdogInterval().multipliedBy(3);
        this.recent = rounds.compareTo(Duration.ofSeconds(5)) >= 0 ? rounds : Duration.ofSeconds(5);
    }

    @Override
    public void afterPropertiesSet() {
        if (props.requeueCheck().isZero()) return;
        timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("gateway-requeue").unstarted(r));
        long every = props.requeueCheck().toMillis();
        timer.scheduleWithFixedDelay(this::resendSafely, every, every, TimeUnit.MILLISECONDS);
    }

    @Override
    public void destroy() {
        if (timer != null) timer.shutdownNow();
    }

    private void resendSafely() {
        try {
            resendStale();
        } catch (Throwable e) {
            // anything, Errors included: a scheduled task that throws is never run again, and jobs would wait forever
            LOG.warn("re-sending stale QUEUED jobs failed (next try in {}): {}", props.requeueCheck(), e.toString());
        }
    }

    /**
     * One round: the ids of the jobs re-sent. A failed send is not counted as a copy (the broker is the problem then),
     * but still waits the same backoff before the next try, so a broker outage is not hammered; a job out of copies is
     * FAILED unless an importer is alive (then it waits on).
     */
    List<UUID> resendStale() {
        List<UUID> sent = new ArrayList<>();
        Boolean importerAlive = null; // read once per round, only when a job is out of copies
        for (JobStore.StaleJob stale : jobs.dueForResend(props.requeueAfter(), BATCH)) {
            JobRow job = stale.job();
            Duration waiting = Duration.between(stale.createdAt(), Instant.now());
            if (stale.resends() >= props.requeueMaxResends()) {
                if (importerAlive == null) importerAlive = importerAlive();
                if (importerAlive) {
                    // busy with a backlog: the job's message is in it; look again after the last backoff
                    if (jobs.postponeResend(job.id(), stale.resends())) {
                        LOG.info("job {}: still QUEUED {} after submission and {} copies, but an importer is alive (busy with earlier jobs): waiting on",
                                job.id(), human(waiting), stale.resends());
                    }
                    continue;
                }
                String reason = "compile.requested was sent " + (stale.resends() + 1) + " times over " + human(waiting)
                        + " and never picked up \u2014 is the importer running?";
                LOG.warn("job {}: {}", job.id(), reason);
                repository.failUnqueued(job.id(), reason);
                continue;
            }
            if (!jobs.claimResend(job.id(), stale.resends())) continue;
            try {
                requests.send(requests.envelope(job, null));
                sent.add(job.id());
                LOG.warn("job {}: still QUEUED {} after submission, compile.requested sent again (copy {} of at most {})", job.id(), human(waiting),
                        stale.resends() + 1, props.requeueMaxResends());
            } catch (CompileRequests.SendFailed e) {
                // not a copy: the count is taken back (last_sent_at stays, so the next try waits the same backoff)
                jobs.unclaimResend(job.id(), stale.resends());
                LOG.warn("job {}: compile.requested could not be sent again (not counted as a copy): {}", job.id(), e.getMessage());
            }
        }
        return sent;
    }

    /** Whether any importer consumer thread reported itself alive lately (what the health endpoint shows). */
    private boolean importerAlive() {
        return consumers.recent(recent).stream().anyMatch(r -> r.alive() && r.stage().equals(Stage.IMPORTER.wireName));
    }

    /** "31 minutes", "2 hours", or "45 s" for short waits (tests, tiny settings). */
    static String human(Duration d) {
        if (d.toMinutes() >= 120) return d.toHours() + " hours";
        if (d.toMinutes() >= 2) return d.toMinutes() + " minutes";
        return d.toSeconds() + " s";
    }
}
