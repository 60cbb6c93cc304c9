package dev.relayfarm.services.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.services.kit.JobStatus;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Jobs as the stages change them: status, events, failures, stage results (the idempotency record of
 * each (job, stage)). Status changes never touch a terminal job, so a cancel or a failure recorded
 * meanwhile is never overwritten. Callers group calls into transactions ({@code StageTransactions}).
 */
@Component
public class JobStore {
    private static final String TERMINAL = "('SUCCEEDED', 'FAILED', 'CANCELLED')";

    private final JdbcTemplate jdbc;
    private final ObjectMapper json;

    public JobStore(JdbcTemplate jdbc, ObjectMapper json) {
        this.jdbc = jdbc;
        this.json = json;
    }

    public Optional<JobRow> find(UUID id) {
        return jdbc.query("SELECT id, status, model_name, model_format, model_sha256, target, opt_level, shapes, error_stage, error_message FROM jobs WHERE id = ?",
                JobStore::job, id).stream().findFirst();
    }

    private static JobRow job(ResultSet rs, int i) throws SQLException {
        return new JobRow(rs.getObject(1, UUID.class), JobStatus.valueOf(rs.getString(2)), rs.getString(3), rs.getString(4), rs.getString(5),
                rs.getString(6), rs.getInt(7), rs.getString(8), rs.getString(9), rs.getString(10));
    }

    public Optional<JobStatus> status(UUID id) {
        return jdbc.query("SELECT status FROM jobs WHERE id = ?", (rs, i) -> JobStatus.valueOf(rs.getString(1)), id).stream().findFirst();
    }

    /** Moves a non-terminal job to {@code status}; false when the job is terminal (or absent). */
    public boolean advance(UUID id, JobStatus status) {
        return jdbc.update("UPDATE jobs SET status = ?, updated_at = now() WHERE id = ? AND status NOT IN " + TERMINAL, status.name(), id) == 1;
    }

    /** Marks a non-terminal job FAILED with the stage and message; false when it already was terminal. */
    public boolean fail(UUID id, String stage, String message) {
        return jdbc.update("UPDATE jobs SET status = 'FAILED', error_stage = ?, error_message = ?, updated_at = now(), finished_at = now() WHERE id = ? AND status NOT IN "
                + TERMINAL, stage, message, id) == 1;
    }

    /** Marks a non-terminal job SUCCEEDED; false when it already was terminal. */
    public boolean succeed(UUID id) {
        return jdbc.update("UPDATE jobs SET status = 'SUCCEEDED', updated_at = now(), finished_at = now() WHERE id = ? AND status NOT IN " + TERMINAL, id) == 1;
    }

    /** Records the job's trace id the first time a stage sees it (the gateway may have set it already). */
    public void traceId(UUID id, String traceId) {
        jdbc.update("UPDATE jobs SET trace_id = ? WHERE id = ? AND trace_id IS NULL", traceId, id);
    }

    /** Appends an event; {@code status} is the job's status after it. */
    public JobEvent event(UUID jobId, String stage, String kind, JobStatus status, String message, Long durationMs) {
        return jdbc.queryForObject("INSERT INTO job_events (job_id, stage, kind, status, message, duration_ms) VALUES (?, ?, ?, ?, ?, ?) RETURNING id, at",
                (rs, i) -> new JobEvent(rs.getLong(1), jobId, stage, kind, status.name(), message, durationMs, rs.getTimestamp(2).toInstant()),
                jobId, stage, kind, status.name(), message, durationMs);
    }

    public List<JobEvent> events(UUID jobId) {
        return jdbc.query("SELECT id, job_id, stage, kind, status, message, duration_ms, at FROM job_events WHERE job_id = ? ORDER BY id",
                (rs, i) -> new JobEvent(rs.getLong(1), rs.getObject(2, UUID.class), rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6),
                        rs.getObject(7) == null ? null : rs.getLong(7), rs.getTimestamp(8).toInstant()), jobId);
    }

    /** The output envelope a stage stored for the job, if it finished it before. */
    public Optional<JsonNode> stageOutput(UUID jobId, String stage) {
        return jdbc.query("SELECT output::text FROM stage_results WHERE job_id = ? AND stage = ?", (rs, i) -> parse(rs.getString(1)), jobId, stage)
                .stream().findFirst();
    }

    /**
     * Stores a stage's result once: true when this call stored it, false when a result for (job, stage)
     * was already there (a concurrent or earlier delivery won; its output stands).
     */
    public boolean storeStageResult(UUID jobId, String stage, JsonNode output, int attempts, Instant startedAt, long durationMs) {
        return jdbc.update("INSERT INTO stage_results (job_id, stage, output, attempts, started_at, duration_ms) VALUES (?, ?, ?::jsonb, ?, ?, ?) "
                + "ON CONFLICT (job_id, stage) DO NOTHING", jobId, stage, output.toString(), attempts, Timestamp.from(startedAt), durationMs) == 1;
    }

    /** Rows in {@code stage_results} for the job: stage name and duration, in finishing order. */
    public List<StageTiming> stageTimings(UUID jobId) {
        return jdbc.query("SELECT stage, duration_ms, attempts FROM stage_results WHERE job_id = ? ORDER BY finished_at",
                (rs, i) -> new StageTiming(rs.getString(1), rs.getLong(2), rs.getInt(3)), jobId);
    }

    /**
     * Counts one more start of {@code stage}'s handler for the job and returns the new count. Committed on its own
     * before the handler runs, so an attempt that kills its thread or its process is still counted after a restart.
     */
    public int beginAttempt(UUID jobId, String stage) {
        return jdbc.queryForObject("""
                INSERT INTO stage_attempts (job_id, stage, attempts) VALUES (?, ?, 1)
                ON CONFLICT (job_id, stage) DO UPDATE SET attempts = stage_attempts.attempts + 1, updated_at = now()
                RETURNING attempts""", Integer.class, jobId, stage);
    }

    /** Takes back an attempt that was stopped from outside (the service shutting down): it says nothing about the message. */
    public void unbeginAttempt(UUID jobId, String stage) {
        jdbc.update("UPDATE stage_attempts SET attempts = attempts - 1, updated_at = now() WHERE job_id = ? AND stage = ? AND attempts > 0", jobId, stage);
    }

    /** Remembers why the last attempt failed (read when a later delivery gives up). */
    public void attemptFailed(UUID jobId, String stage, String error) {
        jdbc.update("UPDATE stage_attempts SET last_error = ?, updated_at = now() WHERE job_id = ? AND stage = ?", error, jobId, stage);
    }

    /** The last recorded error of the stage's attempts at the job, if any. */
    public Optional<String> lastAttemptError(UUID jobId, String stage) {
        return jdbc.queryForList("SELECT last_error FROM stage_attempts WHERE job_id = ? AND stage = ? AND last_error IS NOT NULL", String.class, jobId, stage)
                .stream().findFirst();
    }

    /** How long one stage took for a job and how many attempts it needed. */
    public record StageTiming(String stage, long durationMs, int attempts) {}

    private JsonNode parse(String text) {
        try {
            return json.readTree(text);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("stage_results.output is not JSON: " + e.getMessage(), e);
        }
    }
}
