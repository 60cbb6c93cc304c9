package dev.relayfarm.services.store;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The {@code stage_consumers} table: every stage process's watchdog writes a row per consumer thread (alive,
 * restarts, last error, the job in progress) each round; the gateway's health reads the rows of the last few rounds.
 * A row not refreshed for a while is a process that is gone.
 */
@Component
public class StageConsumers {
    private final JdbcTemplate jdbc;

    public StageConsumers(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** One consumer thread as last reported. */
    public record Row(String id, String stage, boolean alive, int restarts, UUID busyJob, String lastError, Instant lastErrorAt, Instant heartbeatAt) {}

    public void report(Row r) {
        jdbc.update("""
                INSERT INTO stage_consumers (id, stage, alive, restarts, busy_job, last_error, last_error_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, now())
                ON CONFLICT (id) DO UPDATE SET stage = EXCLUDED.stage, alive = EXCLUDED.alive, restarts = EXCLUDED.restarts, busy_job = EXCLUDED.busy_job,
                    last_error = EXCLUDED.last_error, last_error_at = EXCLUDED.last_error_at, heartbeat_at = now()""",
                r.id(), r.stage(), r.alive(), r.restarts(), r.busyJob(), r.lastError(), r.lastErrorAt() == null ? null : Timestamp.from(r.lastErrorAt()));
    }

    /** A process stopping cleanly removes its rows: it is not dead, it is gone on purpose. */
    public void remove(String idPrefix) {
        jdbc.update("DELETE FROM stage_consumers WHERE id LIKE ?", idPrefix.replace("%", "\\%") + "%");
    }

    /** Forgets processes that died without removing their rows (a crash, a kill) longer ago than {@code olderThan}. */
    public void prune(Duration olderThan) {
        jdbc.update("DELETE FROM stage_consumers WHERE heartbeat_at < now() - (? * interval '1 millisecond')", olderThan.toMillis());
    }

    /** Rows refreshed within {@code within}; older rows are processes that stopped or died. */
    public List<Row> recent(Duration within) {
        return jdbc.query("""
                SELECT id, stage, alive, restarts, busy_job, last_error, last_error_at, heartbeat_at FROM stage_consumers
                WHERE heartbeat_at > now() - (? * interval '1 millisecond') ORDER BY stage, id""",
                (rs, i) -> new Row(rs.getString(1), rs.getString(2), rs.getBoolean(3), rs.getInt(4), rs.getObject(5, UUID.class), rs.getString(6),
                        rs.getTimestamp(7) == null ? null : rs.getTimestamp(7).toInstant(), rs.getTimestamp(8).toInstant()),
                within.toMillis());
    }
}
