package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.services.kit.JobEvents;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.BlobRefs;
import dev.relayfarm.services.store.JobEvent;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.NewJob;
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
 * The gateway's use of the farm tables (schemas/sql/V1__farm.sql): creating and cancelling jobs with their events, the
 * quota checks, and the views the REST API shows. The job row is {@link JobStore}'s (the one owner of the jobs table
 * and its status changes), blobs are {@link PgBlobStore}'s, and events go through {@link JobEvents} (every event row
 * is also published to job.events, after its transaction commits).
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
    private final ObjectMapper json;

    public JobRepository(JdbcTemplate jdbc, TransactionTemplate tx, PgBlobStore blobs, JobStore store, JobEvents events, BlobRefs refs,
                         QuotaProperties quotas, RetentionProperties retention, ObjectMapper json) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.blobs = blobs;
        this.store = store;
        this.events = events;
        this.refs = refs;
        this.quotas = quotas;
        this.retention = retention;
        this.json = json;
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
            store.create(new NewJob(id, s.modelName(), s.format().wireName, s.modelSha256(), s.target(), s.optLevel(), s.shapes(), s.tune(), s.quantize(), traceId, tokenId,
                    s.model().length));
            refs.record(id, List.of(s.modelSha256()));
            return events.insert(id, null, "QUEUED", JobStatus.QUEUED, "submitted " + s.modelName() + " for " + s.target() + " -O" + s.optLevel(), null);
        });
        events.publish(queued);
    }

    private void checkQuotas(String tokenId, JobSubmission s) {
        jdbc.queryForList("SELECT pg_advisory_xact_lock(hashtext(?))::text", String.class, "relayfarm-quota-" + tokenId);
        int active = store.activeJobs(tokenId);
        if (active >= quotas.maxActiveJobs()) {
            throw new ApiProblem(ProblemType.QUOTA_EXCEEDED, "quota max-active-jobs (relayfarm.gateway.quota.max-active-jobs): this token has " + active
                    + " jobs queued or running, the limit is " + quotas.maxActiveJobs() + "; wait for one to finish or cancel one",
                    Map.of("quota", "max-active-jobs", "limit", quotas.maxActiveJobs(), "current", active));
        }
        // distinct models of the token's jobs whose bytes are still kept: the same model twice is stored once
        JobStore.StoredUploads stored = store.storedUploads(tokenId, s.modelSha256());
        long limit = quotas.maxStoredUploads().toBytes();
        if (!stored.includesModel() && stored.bytes() + s.model().length > limit) {
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
        JobEvent failed = tx.execute(status -> store.failQueued(id, Stage.GATEWAY, message)
                ? events.insert(id, null, "FAILED", JobStatus.FAILED, message, null) : null);
        events.publish(failed);
    }

    /**
     * Cancels a job unless it is terminal. {@link JobStore} changes a status only from the one it read (compare and set),
     * and never out of a terminal one, so a cancel racing with codegen's SUCCEEDED either wins (the job is
     * CANCELLED, codegen's update changes nothing) or sees the terminal status and answers 409.
     */
    Optional<JobStore.Cancel> cancel(UUID id) {
        record Done(Optional<JobStore.Cancel> outcome, JobEvent event) {}
        Done done = tx.execute(status -> {
            Optional<JobStore.Cancel> outcome = store.cancel(id);
            JobEvent e = outcome.filter(JobStore.Cancel::cancelled)
                    .map(c -> events.insert(id, null, "CANCELLED", JobStatus.CANCELLED, "cancelled by request while " + c.before(), null)).orElse(null);
            return new Done(outcome, e);
        });
        events.publish(done.event());
        return done.outcome();
    }

    public Optional<JobView> find(UUID id) {
        return store.find(id).map(j -> {
            var model = new JobView.Model(j.modelName(), j.modelFormat(), j.modelSha256(), j.modelSizeBytes());
            JobView.JobError error = j.status() == JobStatus.FAILED ? new JobView.JobError(j.errorStage(), j.errorMessage(), j.errorCode()) : null;
            JobView.Artifact artifact = j.status() == JobStatus.SUCCEEDED ? keptArtifact(id).orElse(null) : null;
            return new JobView(id, j.status(), model, j.target(), j.optLevel(), j.shapes(), j.tune(), j.quantize(), j.createdAt(), j.updatedAt(), j.finishedAt(), j.traceId(),
                    stages(id, j.status()), error, artifact, JobLinks.of(id, j.status()));
        });
    }

    /** The job's artifact, unless there is none or retention deleted it. */
    private Optional<JobView.Artifact> keptArtifact(UUID id) {
        return jdbc.query("SELECT content_hash, tar_sha256, size_bytes, created_at FROM artifacts WHERE job_id = ? AND expired_at IS NULL",
                (rs, i) -> new JobView.Artifact(rs.getString("content_hash"), rs.getString("tar_sha256"), rs.getLong("size_bytes"),
                        instant(rs, "created_at"), JobLinks.artifact(id)), id).stream().findFirst();
    }

    public Optional<JobStatus> status(UUID id) {
        return store.status(id);
    }

    /** Newest first. */
    List<JobSummary> list(Optional<JobStatus> status, int limit) {
        return store.list(status, limit).stream().map(j -> new JobSummary(j.id(), j.status(), j.modelName(), j.modelFormat(), j.target(), j.optLevel(),
                j.createdAt(), j.updatedAt(), j.finishedAt(), j.errorStage(), JobLinks.self(j.id()))).toList();
    }

    /** Events after {@code afterId}, oldest first. */
    List<JobEventView> eventsAfter(UUID id, long afterId) {
        return store.events(id).stream().filter(e -> e.id() > afterId)
                .map(e -> new JobEventView(e.id(), e.jobId(), e.stage(), e.kind(), e.status(), e.message(), e.durationMs(), e.at())).toList();
    }

    /** The manifest of a job's artifact (kept or expired: the row keeps it), when its artifacts row exists. */
    public Optional<JsonNode> manifest(UUID id) {
        return jdbc.query("SELECT manifest::text FROM artifacts WHERE job_id = ?", (rs, i) -> {
            try {
                return json.readTree(rs.getString(1));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("artifacts.manifest of job " + id + " is not JSON: " + e.getOriginalMessage(), e);
            }
        }, id).stream().findFirst();
    }

    /** The artifact tarball of a job, when its artifacts row exists. */
    public Optional<byte[]> artifactTar(UUID id) {
        return jdbc.query("SELECT b.bytes FROM artifacts a JOIN blobs b ON b.sha256 = a.tar_sha256 WHERE a.job_id = ?",
                (rs, i) -> rs.getBytes(1), id).stream().findFirst();
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
