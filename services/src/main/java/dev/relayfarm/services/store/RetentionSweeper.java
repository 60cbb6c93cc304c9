package dev.relayfarm.services.store;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Deletes the bytes of jobs finished longer ago than {@code relayfarm.retention.finished-jobs}, every
 * {@code sweep-interval}, in the gateway's process (the role that takes uploads). Per batch of jobs, in one
 * transaction: the jobs and their artifact rows are marked expired (rows and events stay: the history is small, the
 * bytes are not), then every blob those jobs used ({@code job_blobs}) is deleted unless
 * <ul>
 *   <li>a job that is not expired uses it too (blobs are content-addressed: the same model, the same weights), or</li>
 *   <li>it was stored or re-used within {@link #TOUCH_GRACE} ({@code blobs.touched_at}): a stage may be writing
 *       an IR that names it and not yet have recorded that in job_blobs.</li>
 * </ul>
 * The gateway role declares it (GatewayConfig), so the store stays below the services. Several gateways may sweep at once: a batch takes its jobs with {@code SKIP LOCKED}, and deleting is idempotent.
 */
public class RetentionSweeper implements InitializingBean, DisposableBean {
    private static final Logger LOG = LoggerFactory.getLogger(RetentionSweeper.class);
    /** Longer than any stage takes (relayfarm.stage.max-poll-interval, 15 min) between storing a blob and recording its use. */
    static final Duration TOUCH_GRACE = Duration.ofHours(1);
    private static final int BATCH = 100;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final JobStore jobs;
    private final RetentionProperties props;
    private ScheduledExecutorService timer;

    public RetentionSweeper(JdbcTemplate jdbc, TransactionTemplate tx, JobStore jobs, RetentionProperties props) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.jobs = jobs;
        this.props = props;
    }

    /** What one sweep did. */
    public record Swept(int jobs, int blobs, long bytes) {}

    @Override
    public void afterPropertiesSet() {
        if (props.sweepInterval().isZero()) return;
        timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("retention-sweeper").unstarted(r));
        long every = props.sweepInterval().toMillis();
        timer.scheduleWithFixedDelay(() -> {
            try {
                Swept s = sweep();
                if (s.jobs() > 0) LOG.info("retention: {} jobs finished over {} ago expired, {} blobs ({} bytes) deleted", s.jobs(), props.finishedJobs(), s.blobs(), s.bytes());
            } catch (Throwable e) {
                // anything, Errors included: a scheduled task that throws is never run again
                LOG.warn("retention sweep failed (next in {}): {}", props.sweepInterval(), e.toString());
            }
        }, Math.min(every, 60_000), every, TimeUnit.MILLISECONDS);
    }

    @Override
    public void destroy() {
        if (timer != null) timer.shutdownNow();
    }

    /** Expires every job due, batch by batch, then deletes the blobs no job that is not expired uses any more. */
    public Swept sweep() {
        int expired = 0;
        while (true) {
            int batch = tx.execute(s -> jobs.expireFinished(props.finishedJobs(), BATCH));
            expired += batch;
            if (batch < BATCH) break;
        }
        long[] deleted = tx.execute(s -> deleteUnused());
        return new Swept(expired, (int) deleted[0], deleted[1]);
    }

    /**
     * The blobs of expired jobs that no job still kept uses and nobody touched lately. A blob kept now (shared with a
     * live job, or touched) stays a candidate: its expired job's job_blobs row is dropped only once the blob is gone,
     * so a later sweep deletes it when its last user has expired too.
     */
    private long[] deleteUnused() {
        long[] deleted = {0, 0};
        jdbc.query("""
                DELETE FROM blobs b WHERE b.sha256 IN (SELECT jb.sha256 FROM job_blobs jb JOIN jobs j ON j.id = jb.job_id WHERE j.expired_at IS NOT NULL)
                  AND b.touched_at < now() - (? * interval '1 millisecond')
                  AND NOT EXISTS (SELECT 1 FROM job_blobs jb JOIN jobs j ON j.id = jb.job_id WHERE jb.sha256 = b.sha256 AND j.expired_at IS NULL)
                  -- jobs written without job_blobs rows still protect what their own rows name
                  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.model_sha256 = b.sha256 AND j.expired_at IS NULL)
                  AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.tar_sha256 = b.sha256 AND a.expired_at IS NULL)
                RETURNING b.size_bytes""", rs -> {
            deleted[0]++;
            deleted[1] += rs.getLong(1);
        }, TOUCH_GRACE.toMillis());
        jdbc.update("""
                DELETE FROM job_blobs jb USING jobs j WHERE j.id = jb.job_id AND j.expired_at IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = jb.sha256)""");
        return deleted;
    }
}
