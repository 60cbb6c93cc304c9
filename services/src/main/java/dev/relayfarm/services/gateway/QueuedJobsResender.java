package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.store.JobRow;
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
 */
@Component
@ServiceRole("gateway")
public class QueuedJobsResender implements InitializingBean, DisposableBean {
    private static final Logger LOG = LoggerFactory.getLogger(QueuedJobsResender.class);
    private static final int BATCH = 100;

    private final JobRepository jobs;
    private final CompileRequests requests;
    private final GatewayProperties props;
    private ScheduledExecutorService timer;

    public QueuedJobsResender(JobRepository jobs, CompileRequests requests, GatewayProperties props) {
        this.jobs = jobs;
        this.requests = requests;
        this.props = props;
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
        } catch (RuntimeException e) {
            LOG.warn("re-sending stale QUEUED jobs failed (next try in {}): {}", props.requeueCheck(), e.getMessage());
        }
    }

    /** One round: the ids of the jobs re-sent. A job whose send fails stays QUEUED for the next round. */
    List<UUID> resendStale() {
        List<UUID> sent = new ArrayList<>();
        for (JobRow job : jobs.queuedBefore(Instant.now().minus(props.requeueAfter()), BATCH)) {
            try {
                requests.send(requests.envelope(job, null));
                sent.add(job.id());
                LOG.warn("job {}: still QUEUED {} after submission, compile.requested sent again", job.id(), props.requeueAfter());
            } catch (CompileRequests.SendFailed e) {
                LOG.warn("job {}: compile.requested could not be sent again: {}", job.id(), e.getMessage());
            }
        }
        return sent;
    }
}
