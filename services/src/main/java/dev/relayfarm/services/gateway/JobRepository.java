package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.JobEvents;
import dev.relayfarm.services.kit.JobStatus;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.BlobRefs;
import dev.relayfarm.services.store.JobEvent;
import dev.relayfarm.services.store.JobRow;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.PgBlobStore;
import dev.relayfarm.services.store.RetentionProperties;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The gateway's reads and writes of the farm tables (schemas/sql/V1__farm.sql): creating and cancelling jobs,
 * and the views the REST API shows. Blobs and events go through the service kit's store ({@link PgBlobStore},
 * {@link JobEvents}: every event row is also published to job.events, after its transaction commits); the job row
 * itself and the read-side joins for the API are the gateway's own. Stages own every other write.
 */
@Repository
@ServiceRole(Stage.GATEWAY)
public class JobRepository {
    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final PgBlobStore blobs;
    private final JobStore store;
    private final JobEvents events;
    private final BlobRefs refs;
    private final QuotaProperties quotas;
    private final RetentionProperties retention;

    public JobRepository(JdbcTemplate jdbc, TransactionTemplate tx, PgBlobStore blobs, JobStore store, JobEvents events, BlobRefs refs,
                         QuotaProperties quotas, RetentionProperties retention) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.blobs = blobs;
        this.store = store;
        this.events = events;
        this.refs = refs;
        this.quotas = quotas;
        this.retention = retention;
    }

    /** A job still QUEUED whose next compile.requested copy is due: how many copies it got, since when it waits. */
    record StaleJob(JobRow job, int resends, Instant createdAt) {}

    /**
     * Jobs still QUEUED whose last send (the submit's, or the last re-send) is older than {@code after} times 2 to
     * the number of re-sends so far, oldest first (at most {@code limit}).
     */
    List<StaleJob> dueForResend(Duration after, int limit) {
        return jdbc.query("""
                SELECT id, model_name, model_format, model_sha256, target, opt_level, shapes, resend_count, created_at
                FROM jobs WHERE status = 'QUEUED'
                  AND coalesce(last_sent_at, created_at) + (? * power(2, least(resend_count, 30))) * interval '1 millisecond' < now()
                ORDER BY created_at LIMIT ?""",
                (rs, i) -> new StaleJob(new JobRow(rs.getObject("id", UUID.class), JobStatus.QUEUED, rs.getString("model_name"), rs.getString("model_format"),
                        rs.getString("model_sha256").trim(), rs.getString("target"), rs.getInt("opt_level"), rs.getString("shapes"), null, null),
                        rs.getInt("resend_count"), instant(rs, "created_at")),
                after.toMillis(), limit);
    }

    /**
     * Counts a re-send before it happens; false when the job is no longer QUEUED or another gateway counted this one
     * first (its resend_count moved), so two gateways never both send the same copy.
     */
    boolean claimResend(UUID id, int resendsSeen) {
        return jdbc.update("UPDATE jobs SET resend_count = resend_count + 1, last_sent_at = now(), updated_at = now() WHERE id = ? AND status = 'QUEUED' AND resend_count = ?",
                id, resendsSeen) == 1;
    }

    /** Takes back a claimed re-send whose send failed; last_sent_at stays, so the next try waits the same backoff. */
    void unclaimResend(UUID id, int resendsSeen) {
        jdbc.update("UPDATE jobs SET resend_count = resend_count - 1, updated_at = now() WHERE id = ? AND status = 'QUEUED' AND resend_count = ?",
                id, resendsSeen + 1);
    }

    /**
     * A job out of copies whose importer is alive waits one more last backoff before it is looked at again (last_sent_at
     * moves, resend_count does not); false when it is no longer QUEUED or another gateway postponed it first.
     */
    boolean postponeResend(UUID id, int resendsSeen) {
        return jdbc.update("""
                UPDATE jobs SET last_sent_at = now(), updated_at = now() WHERE id = ? AND status = 'QUEUED' AND resend_count = ?""", id, resendsSeen) == 1;
    }

    /** {@link #create(UUID, JobSubmission, String, String)} for no token (no quota applies). */
    void create(UUID id, JobSubmission s, String traceId) {
        create(id, s, traceId, null);
    }

    /**
     * Stores the model blob (once per content), the QUEUED job and its QUEUED event, in one transaction, after checking
     * the token's quotas ({@link QuotaProperties}; throws the 429 problem). A lock per token makes check and insert one
     * step, so concurrent submits of one client cannot both slip under a limit.
     */
    void create(UUID id, JobSubmission s, String traceId, String tokenId) {
        JobEvent queued = tx.execute(status -> {
            if (tokenId != null) checkQuotas(tokenId, s);
            blobs.put(s.modelSha256(), s.model());
            jdbc.update("""
                    INSERT INTO jobs (id, status, model_name, model_format, model_sha256, target, opt_level, shapes, trace_id, token_id, model_size_bytes)
                    VALUES (?, 'QUEUED', ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    id, s.modelName(), s.format().wireName, s.modelSha256(), s.target(), s.optLevel(), s.shapes(), traceId, tokenId, (long) s.model().length);
            refs.record(id, List.of(s.modelSha256()));
            return events.insert(id, null, "QUEUED", JobStatus.QUEUED, "submitted " + s.modelName() + " for " + s.target() + " -O" + s.optLevel(), null);
        });
        events.publish(queued);
    }

    private void checkQuotas(String tokenId, JobSubmission s) {
        jdbc.queryForList("SELECT pg_advisory_xact_lock(hashtext(?))::text", String.class, "relayfarm-quota-" + tokenId);
        int active = jdbc.queryForObject("SELECT count(*) FROM jobs WHERE token_id = ? AND status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED')",
                Integer.class, tokenId);
        if (active >= quotas.maxActiveJobs()) {
            throw new ApiProblem(ProblemType.QUOTA_EXCEEDED, "quota max-active-jobs (relayfarm.gateway.quota.max-active-jobs): this token has " + active
                    + " jobs queued or running, the limit is " + quotas.maxActiveJobs() + "; wait for one to finish or cancel one",
                    Map.of("quota", "max-active-jobs", "limit", quotas.maxActiveJobs(), "current", active));
        }
        // distinct models of the token's jobs whose bytes are still kept: the same model twice is stored once
        record Stored(long bytes, boolean hasThis) {}
        Stored stored = jdbc.queryForObject("""
                SELECT coalesce(sum(size), 0), coalesce(bool_or(sha = ?), false) FROM (
                    SELECT DISTINCT model_sha256 AS sha, coalesce(model_size_bytes, 0) AS size FROM jobs WHERE token_id = ? AND expired_at IS NULL) m""",
                (rs, i) -> new Stored(rs.getLong(1), rs.getBoolean(2)), s.modelSha256(), tokenId);
        long limit = quotas.maxStoredUploads().toBytes();
        if (!stored.hasThis() && stored.bytes() + s.model().length > limit) {
            throw new ApiProblem(ProblemType.QUOTA_EXCEEDED, "quota max-stored-uploads (relayfarm.gateway.quota.max-stored-uploads): this token's kept uploads take "
                    + stored.bytes() + " bytes, this upload of " + s.model().length + " bytes would make " + (stored.bytes() + s.model().length)
                    + ", the limit is " + limit + " bytes; uploads are deleted " + retention.finishedJobs().toDays() + " days after their job finished"
                    + " (relayfarm.retention.finished-jobs)",
                    Map.of("quota", "max-stored-uploads", "limit", limit, "current", stored.bytes(), "requested", s.model().length));
        }
    }

    /** When retention deleted the job's artifact, if it did. */
    Optional<Instant> artifactExpiredAt(UUID id) {
        return jdbc.query("SELECT expired_at FROM artifacts WHERE job_id = ? AND expired_at IS NOT NULL", (rs, i) -> instant(rs, "expired_at"), id)
                .stream().findFirst();
    }

    Duration retention() {
        return retention.finishedJobs();
    }

    /**
     * The job could not be queued (Kafka refused compile.requested): it fails in the gateway, visibly. The job's
     * error_stage is {@code gateway}; its event, like every gateway event, has no stage (job.events schema).
     */
    void failUnqueued(UUID id, String message) {
        JobEvent failed = tx.execute(status -> {
            int n = jdbc.update("""
                    UPDATE jobs SET status = 'FAILED', error_stage = 'gateway', error_message = ?, updated_at = now(), finished_at = now()
                    WHERE id = ? AND status = 'QUEUED'""", message, id);
            return n == 1 ? events.insert(id, null, "FAILED", JobStatus.FAILED, message, null) : null;
        });
        events.publish(failed);
    }

    /** What a cancel did: the job's status before, and whether this call changed it. */
    record CancelOutcome(JobStatus before, boolean cancelled) {}

    /**
     * Cancels a job unless it is terminal. The row lock makes check and update one step, and the stages' own status
     * updates only apply to non-terminal jobs, so a cancel racing with codegen's SUCCEEDED either wins (the job is
     * CANCELLED, codegen's update changes nothing) or sees the terminal status and answers 409.
     */
    Optional<CancelOutcome> cancel(UUID id) {
        record Done(Optional<CancelOutcome> outcome, JobEvent event) {}
        Done done = tx.execute(status -> {
            List<String> before = jdbc.queryForList("SELECT status FROM jobs WHERE id = ? FOR UPDATE", String.class, id);
            if (before.isEmpty()) return new Done(Optional.empty(), null);
            JobStatus was = JobStatus.valueOf(before.getFirst());
            if (was.terminal()) return new Done(Optional.of(new CancelOutcome(was, false)), null);
            jdbc.update("UPDATE jobs SET status = 'CANCELLED', updated_at = now(), finished_at = now() WHERE id = ?", id);
            JobEvent e = events.insert(id, null, "CANCELLED", JobStatus.CANCELLED, "cancelled by request while " + was, null);
            return new Done(Optional.of(new CancelOutcome(was, true)), e);
        });
        events.publish(done.event());
        return done.outcome();
    }

    Optional<JobView> find(UUID id) {
        List<JobView> rows = jdbc.query("""
                SELECT j.*, coalesce(j.model_size_bytes, b.size_bytes, 0) AS model_size, a.content_hash, a.tar_sha256, a.size_bytes AS artifact_size,
                       a.created_at AS artifact_created, a.expired_at AS artifact_expired
                FROM jobs j LEFT JOIN blobs b ON b.sha256 = j.model_sha256 LEFT JOIN artifacts a ON a.job_id = j.id
                WHERE j.id = ?""", (rs, i) -> detail(rs), id);
        if (rows.isEmpty()) return Optional.empty();
        JobView j = rows.getFirst();
        return Optional.of(new JobView(j.id(), j.status(), j.model(), j.target(), j.optLevel(), j.shapes(), j.createdAt(),
                j.updatedAt(), j.finishedAt(), j.traceId(), stages(id, j.status()), j.error(), j.artifact(), j.links()));
    }

    Optional<JobStatus> status(UUID id) {
        return store.status(id);
    }

    /** Newest first. */
    List<JobSummary> list(Optional<JobStatus> status, int limit) {
        String sql = "SELECT id, status, model_name, model_format, target, opt_level, created_at, updated_at, finished_at, error_stage FROM jobs"
                + (status.isPresent() ? " WHERE status = ?" : "") + " ORDER BY created_at DESC, id LIMIT ?";
        Object[] args = status.isPresent() ? new Object[] {status.get().name(), limit} : new Object[] {limit};
        return jdbc.query(sql, (rs, i) -> {
            UUID id = rs.getObject("id", UUID.class);
            return new JobSummary(id, JobStatus.valueOf(rs.getString("status")), rs.getString("model_name"), rs.getString("model_format"),
                    rs.getString("target"), rs.getInt("opt_level"), instant(rs, "created_at"), instant(rs, "updated_at"),
                    instant(rs, "finished_at"), rs.getString("error_stage"), JobLinks.self(id));
        }, args);
    }

    /** Events after {@code afterId}, oldest first. */
    List<JobEventView> eventsAfter(UUID id, long afterId) {
        return store.events(id).stream().filter(e -> e.id() > afterId)
                .map(e -> new JobEventView(e.id(), e.jobId(), e.stage(), e.kind(), e.status(), e.message(), e.durationMs(), e.at())).toList();
    }

    /** The artifact tarball of a job, when its artifacts row exists. */
    Optional<byte[]> artifactTar(UUID id) {
        return jdbc.query("SELECT b.bytes FROM artifacts a JOIN blobs b ON b.sha256 = a.tar_sha256 WHERE a.job_id = ?",
                (rs, i) -> rs.getBytes(1), id).stream().findFirst();
    }

    private static JobView detail(ResultSet rs) throws SQLException {
        UUID id = rs.getObject("id", UUID.class);
        JobStatus status = JobStatus.valueOf(rs.getString("status"));
        var model = new JobView.Model(rs.getString("model_name"), rs.getString("model_format"), rs.getString("model_sha256"), rs.getLong("model_size"));
        JobView.JobError error = status == JobStatus.FAILED ? new JobView.JobError(rs.getString("error_stage"), rs.getString("error_message")) : null;
        String tar = rs.getString("tar_sha256");
        JobView.Artifact artifact = status == JobStatus.SUCCEEDED && tar != null && rs.getTimestamp("artifact_expired") == null
                ? new JobView.Artifact(rs.getString("content_hash"), tar, rs.getLong("artifact_size"), instant(rs, "artifact_created"), JobLinks.artifact(id))
                : null;
        return new JobView(id, status, model, rs.getString("target"), rs.getInt("opt_level"), rs.getString("shapes"),
                instant(rs, "created_at"), instant(rs, "updated_at"), instant(rs, "finished_at"), rs.getString("trace_id"),
                List.of(), error, artifact, JobLinks.of(id, status));
    }

    /**
     * Per-stage timings: a stage_results row is authoritative for a finished stage; a stage without one is running
     * or failed, and its job_events (STARTED, RETRY, FAILED) say since when and how often it was tried.
     */
    private List<JobView.StageTiming> stages(UUID id, JobStatus jobStatus) {
        Map<String, JobView.StageTiming> byStage = new LinkedHashMap<>();
        record Ev(String stage, String kind, Instant at, Long durationMs) {}
        List<Ev> events = jdbc.query("SELECT stage, kind, at, duration_ms FROM job_events WHERE job_id = ? AND stage IS NOT NULL ORDER BY id",
                (rs, i) -> new Ev(rs.getString("stage"), rs.getString("kind"), instant(rs, "at"), rs.getObject("duration_ms", Long.class)), id);
        for (Ev e : events) {
            var cur = byStage.get(e.stage());
            switch (e.kind()) {
                case "STARTED" -> {
                    if (cur == null) byStage.put(e.stage(), new JobView.StageTiming(e.stage(), "RUNNING", e.at(), null, null, 1));
                }
                case "RETRY" -> {
                    if (cur != null) byStage.put(e.stage(), new JobView.StageTiming(e.stage(), cur.status(), cur.startedAt(), null, null, cur.attempts() + 1));
                }
                case "FINISHED", "FAILED" -> {
                    Instant started = cur == null ? e.at() : cur.startedAt();
                    Long ms = e.durationMs() != null ? e.durationMs() : Duration.between(started, e.at()).toMillis();
                    byStage.put(e.stage(), new JobView.StageTiming(e.stage(), e.kind(), started, e.at(), ms, cur == null ? 1 : cur.attempts()));
                }
                default -> { }
            }
        }
        jdbc.query("SELECT stage, attempts, started_at, finished_at, duration_ms FROM stage_results WHERE job_id = ?", (ResultSet rs) -> {
            String stage = rs.getString("stage");
            byStage.put(stage, new JobView.StageTiming(stage, "FINISHED", instant(rs, "started_at"), instant(rs, "finished_at"),
                    rs.getLong("duration_ms"), rs.getInt("attempts")));
        }, id);
        List<JobView.StageTiming> out = new ArrayList<>();
        for (Stage st : Stage.values()) {
            var t = byStage.remove(st.wireName);
            if (t != null) out.add(interrupted(t, jobStatus));
        }
        byStage.values().forEach(t -> out.add(interrupted(t, jobStatus)));
        return out;
    }

    /** A stage still "running" in a cancelled job will never finish: say so. */
    private static JobView.StageTiming interrupted(JobView.StageTiming t, JobStatus job) {
        return t.status().equals("RUNNING") && job == JobStatus.CANCELLED
                ? new JobView.StageTiming(t.stage(), "CANCELLED", t.startedAt(), null, null, t.attempts())
                : t;
    }

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
