package dev.relayfarm.services.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.services.store.JobStatus;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The one owner of the {@code jobs} table: a job's creation, every status change (each checked against
 * {@link JobStatus#canMoveTo}: a move out of a terminal status is refused quietly, so a cancel or a failure recorded
 * meanwhile is never overwritten; any other illegal move throws {@link IllegalJobTransition}; nothing illegal is
 * written), the gateway's re-send bookkeeping, quota counts and expiry, and the reads. Also the job's events, stage
 * results (the idempotency record of each (job, stage)) and stage attempts. Callers group calls into transactions
 * ({@code StageTransactions}).
 */
@Component
public class JobStore {
    /** The terminal statuses, as SQL: {@link JobStatus#terminal}. */
    private static final String TERMINAL = Arrays.stream(JobStatus.values()).filter(JobStatus::terminal).map(s -> "'" + s + "'")
            .collect(Collectors.joining(", ", "(", ")"));
    /** A {@link JobRow}'s columns, of {@link #ROW_FROM}. */
    private static final String ROW_COLUMNS = """
            j.id, j.status, j.model_name, j.model_format, j.model_sha256, coalesce(j.model_size_bytes, b.size_bytes, 0) AS model_size,
            j.target, j.opt_level, j.shapes, j.tune, j.quantize, j.error_stage, j.error_message, j.error_code, j.trace_id, j.created_at, j.updated_at, j.finished_at""";
    private static final String ROW_FROM = " FROM jobs j LEFT JOIN blobs b ON b.sha256 = j.model_sha256";
    private static final String ROW = "SELECT " + ROW_COLUMNS + ROW_FROM;

    private final JdbcTemplate jdbc;
    private final ObjectMapper json;

    public JobStore(JdbcTemplate jdbc, ObjectMapper json) {
        this.jdbc = jdbc;
        this.json = json;
    }

    /** Inserts the job, QUEUED. */
    public void create(NewJob j) {
        jdbc.update("""
                INSERT INTO jobs (id, status, model_name, model_format, model_sha256, target, opt_level, shapes, tune, quantize, trace_id, token_id, model_size_bytes)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                j.id(), JobStatus.QUEUED.name(), j.modelName(), j.modelFormat(), j.modelSha256(), j.target(), j.optLevel(), j.shapes(), j.tune(), j.quantize(), j.traceId(),
                j.tokenId(), j.modelSizeBytes());
    }

    public Optional<JobRow> find(UUID id) {
        return jdbc.query(ROW + " WHERE j.id = ?", JobStore::row, id).stream().findFirst();
    }

    /** Newest first, at most {@code limit}, those in {@code status} when given. */
    public List<JobRow> list(Optional<JobStatus> status, int limit) {
        String sql = ROW + (status.isPresent() ? " WHERE j.status = ?" : "") + " ORDER BY j.created_at DESC, j.id LIMIT ?";
        Object[] args = status.isPresent() ? new Object[] {status.get().name(), limit} : new Object[] {limit};
        return jdbc.query(sql, JobStore::row, args);
    }

    /**
     * Newest first, filtered: {@code status} exact, {@code model} a case-insensitive part of the model name,
     * {@code since} created at or after; a null filter does not filter. The dashboard's jobs list.
     */
    public List<JobRow> list(JobStatus status, String model, Instant since, int limit) {
        StringBuilder where = new StringBuilder(" WHERE true");
        List<Object> args = new java.util.ArrayList<>();
        if (status != null) {
            where.append(" AND j.status = ?");
            args.add(status.name());
        }
        if (model != null && !model.isBlank()) {
            // a literal part of the name: LIKE's wildcards in it match themselves
            where.append(" AND j.model_name ILIKE ? ESCAPE '\\'");
            args.add("%" + model.trim().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%");
        }
        if (since != null) {
            where.append(" AND j.created_at >= ?");
            args.add(Timestamp.from(since));
        }
        args.add(limit);
        return jdbc.query(ROW + where + " ORDER BY j.created_at DESC, j.id LIMIT ?", JobStore::row, args.toArray());
    }

    private static JobRow row(ResultSet rs, int i) throws SQLException {
        return new JobRow(rs.getObject("id", UUID.class), JobStatus.valueOf(rs.getString("status")), rs.getString("model_name"),
                rs.getString("model_format"), rs.getString("model_sha256").trim(), rs.getLong("model_size"), rs.getString("target"),
                rs.getInt("opt_level"), rs.getString("shapes"), rs.getString("tune"), rs.getString("quantize"), rs.getString("error_stage"), rs.getString("error_message"), rs.getString("error_code"), rs.getString("trace_id"),
                instant(rs, "created_at"), instant(rs, "updated_at"), instant(rs, "finished_at"));
    }

    public Optional<JobStatus> status(UUID id) {
        return jdbc.query("SELECT status FROM jobs WHERE id = ?", (rs, i) -> JobStatus.valueOf(rs.getString(1)), id).stream().findFirst();
    }

    /** Moves the job to a stage's status; false when the job is terminal (or absent). */
    public boolean advance(UUID id, JobStatus status) {
        if (status.terminal() || status == JobStatus.QUEUED) throw new IllegalArgumentException(status + " is not a stage's status");
        return move(id, status, from -> true, "").isPresent();
    }

    /**
     * Marks the job FAILED with the stage, message and, for a user error, its diagnostic code (null for an internal
     * failure); false when it already was terminal.
     */
    public boolean fail(UUID id, String stage, String message, String code) {
        return move(id, JobStatus.FAILED, from -> true, ", error_stage = ?, error_message = ?, error_code = ?", stage, message, code).isPresent();
    }

    /** Marks the job FAILED like {@link #fail}, but only while it is still QUEUED (no stage has picked it up). */
    public boolean failQueued(UUID id, String stage, String message) {
        return move(id, JobStatus.FAILED, from -> from == JobStatus.QUEUED, ", error_stage = ?, error_message = ?", stage, message).isPresent();
    }

    /** Marks the job SUCCEEDED; false when it already was terminal. */
    public boolean succeed(UUID id) {
        return move(id, JobStatus.SUCCEEDED, from -> true, "").isPresent();
    }

    /** What a cancel did: the job's status before, and whether this call changed it. */
    public record Cancel(JobStatus before, boolean cancelled) {}

    /** Cancels the job unless it is terminal; empty when there is no such job. */
    public Optional<Cancel> cancel(UUID id) {
        Optional<JobStatus> before = status(id);
        if (before.isEmpty()) return Optional.empty();
        Optional<JobStatus> moved = move(id, JobStatus.CANCELLED, from -> true, "");
        return Optional.of(moved.map(from -> new Cancel(from, true)).orElseGet(() -> new Cancel(status(id).orElseThrow(), false)));
    }

    /**
     * Moves the job to {@code to} when {@link JobStatus#canMoveTo} allows it and {@code when} accepts its current status;
     * returns the status it moved from. Compare-and-set on the status read, so a concurrent change is read again
     * rather than overwritten. Empty when the job is absent, terminal, or not accepted by {@code when}.
     */
    private Optional<JobStatus> move(UUID id, JobStatus to, Predicate<JobStatus> when, String alsoSet, Object... alsoArgs) {
        String finished = to.terminal() ? ", finished_at = now()" : "";
        while (true) {
            Optional<JobStatus> current = status(id);
            if (current.isEmpty() || current.get().terminal() || !when.test(current.get())) return Optional.empty();
            JobStatus from = current.get();
            if (!from.canMoveTo(to)) throw new IllegalJobTransition(id, from, to);
            Object[] args = new Object[alsoArgs.length + 3];
            args[0] = to.name();
            System.arraycopy(alsoArgs, 0, args, 1, alsoArgs.length);
            args[alsoArgs.length + 1] = id;
            args[alsoArgs.length + 2] = from.name();
            if (jdbc.update("UPDATE jobs SET status = ?, updated_at = now()" + finished + alsoSet + " WHERE id = ? AND status = ?", args) == 1) {
                return current;
            }
        }
    }

    /** Records the job's trace id the first time a stage sees it (the gateway may have set it already). */
    public void traceId(UUID id, String traceId) {
        jdbc.update("UPDATE jobs SET trace_id = ? WHERE id = ? AND trace_id IS NULL", traceId, id);
    }

    /** A job still QUEUED whose next compile.requested copy is due: how many copies it got, since when it waits. */
    public record StaleJob(JobRow job, int resends, Instant createdAt) {}

    /**
     * Jobs still QUEUED whose last send (the submit's, or the last re-send) is older than {@code after} times 2 to
     * the number of re-sends so far, oldest first (at most {@code limit}).
     */
    public List<StaleJob> dueForResend(Duration after, int limit) {
        return jdbc.query("SELECT j.resend_count, " + ROW_COLUMNS + ROW_FROM + """
                 WHERE j.status = 'QUEUED'
                  AND coalesce(j.last_sent_at, j.created_at) + (? * power(2, least(j.resend_count, 30))) * interval '1 millisecond' < now()
                ORDER BY j.created_at LIMIT ?""",
                (rs, i) -> new StaleJob(row(rs, i), rs.getInt("resend_count"), instant(rs, "created_at")), after.toMillis(), limit);
    }

    /**
     * Counts a re-send before it happens; false when the job is no longer QUEUED or another gateway counted this one
     * first (its resend_count moved), so two gateways never both send the same copy.
     */
    public boolean claimResend(UUID id, int resendsSeen) {
        return jdbc.update("UPDATE jobs SET resend_count = resend_count + 1, last_sent_at = now(), updated_at = now() WHERE id = ? AND status = 'QUEUED' AND resend_count = ?",
                id, resendsSeen) == 1;
    }

    /** Takes back a claimed re-send whose send failed; last_sent_at stays, so the next try waits the same backoff. */
    public void unclaimResend(UUID id, int resendsSeen) {
        jdbc.update("UPDATE jobs SET resend_count = resend_count - 1, updated_at = now() WHERE id = ? AND status = 'QUEUED' AND resend_count = ?",
                id, resendsSeen + 1);
    }

    /**
     * A job out of copies whose importer is alive waits one more last backoff before it is looked at again (last_sent_at
     * moves, resend_count does not); false when it is no longer QUEUED or another gateway postponed it first.
     */
    public boolean postponeResend(UUID id, int resendsSeen) {
        return jdbc.update("UPDATE jobs SET last_sent_at = now(), updated_at = now() WHERE id = ? AND status = 'QUEUED' AND resend_count = ?",
                id, resendsSeen) == 1;
    }

    /** How many of the token's jobs are queued or running. */
    public int activeJobs(String tokenId) {
        return jdbc.queryForObject("SELECT count(*) FROM jobs WHERE token_id = ? AND status NOT IN " + TERMINAL, Integer.class, tokenId);
    }

    /** The bytes of the token's uploads still kept (each distinct model once), and whether {@code modelSha256} is one of them. */
    public record StoredUploads(long bytes, boolean includesModel) {}

    public StoredUploads storedUploads(String tokenId, String modelSha256) {
        return jdbc.queryForObject("""
                SELECT coalesce(sum(size), 0), coalesce(bool_or(sha = ?), false) FROM (
                    SELECT DISTINCT model_sha256 AS sha, coalesce(model_size_bytes, 0) AS size FROM jobs WHERE token_id = ? AND expired_at IS NULL) m""",
                (rs, i) -> new StoredUploads(rs.getLong(1), rs.getBoolean(2)), modelSha256, tokenId);
    }

    /**
     * Marks up to {@code limit} jobs that finished more than {@code age} ago expired, with their artifact rows (their
     * bytes are deleted next; rows and events stay); returns how many. Jobs another sweeper holds are skipped.
     */
    public int expireFinished(Duration age, int limit) {
        // now() is the transaction's start time: the jobs this call expires are those with expired_at = now()
        int expired = jdbc.update("""
                UPDATE jobs SET expired_at = now() WHERE id IN (
                    SELECT id FROM jobs WHERE status IN %s AND expired_at IS NULL
                      AND finished_at < now() - (? * interval '1 millisecond')
                    ORDER BY finished_at LIMIT ? FOR UPDATE SKIP LOCKED)""".formatted(TERMINAL), age.toMillis(), limit);
        if (expired > 0) jdbc.update("UPDATE artifacts SET expired_at = now() WHERE job_id IN (SELECT id FROM jobs WHERE expired_at = now())");
        return expired;
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

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }

    private JsonNode parse(String text) {
        try {
            return json.readTree(text);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("stage_results.output is not JSON: " + e.getMessage(), e);
        }
    }
}
