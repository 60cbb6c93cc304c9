package dev.relayfarm.services.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The farm's devices (table {@code devices}) as the gateway sees them: hardware agents register and beat there
 * themselves; this reads them, drains one on an operator's request, and marks silent ones OFFLINE.
 */
@Component
public class Devices {
    /** The window {@link DeviceRow#measurementsPerMinute} is averaged over. */
    static final Duration RATE_WINDOW = Duration.ofMinutes(5);
    private static final String SELECT = """
            SELECT d.id, d.device_class, d.host, d.status, d.registered_at, d.last_heartbeat, d.in_flight, d.measured, d.failures::text,
                   d.compiler, d.relayfarm_version, d.capabilities::text, d.hardware::text,
                   (SELECT count(*) FROM tuning_records r WHERE r.device_id = d.id AND r.measured_at > now() - interval '%d minutes') AS recent
            FROM devices d
            """.formatted(RATE_WINDOW.toMinutes());

    private final JdbcTemplate jdbc;

    public Devices(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** Every device, by class then id. */
    public List<DeviceRow> list() {
        return jdbc.query(SELECT + " ORDER BY d.device_class, d.id", (rs, i) -> row(rs));
    }

    public Optional<DeviceRow> find(String id) {
        return jdbc.query(SELECT + " WHERE d.id = ?", (rs, i) -> row(rs), id).stream().findFirst();
    }

    /** The device classes there are devices of (any status), sorted. */
    public List<String> classes() {
        return jdbc.queryForList("SELECT DISTINCT device_class FROM devices ORDER BY device_class", String.class);
    }

    /** What {@link #drain} did. */
    public enum Drain { DRAINING, NOT_FOUND, OFFLINE }

    /**
     * Sets the device DRAINING, so its agent takes no new work (it reads its row's status) and finishes what it has.
     * An OFFLINE device is refused: there is no agent to drain, and its next heartbeat would have to decide between
     * the two. Draining a DRAINING device again is a no-op.
     */
    public Drain drain(String id) {
        int changed = jdbc.update("UPDATE devices SET status = 'DRAINING' WHERE id = ? AND status <> 'OFFLINE'", id);
        if (changed == 1) return Drain.DRAINING;
        return jdbc.queryForList("SELECT status FROM devices WHERE id = ?", String.class, id).isEmpty() ? Drain.NOT_FOUND : Drain.OFFLINE;
    }

    /**
     * Marks OFFLINE every device, ONLINE or DRAINING, whose last heartbeat is older than {@code silentFor} (by the
     * database's clock, the one agents' heartbeats are written with); returns their ids.
     */
    public List<String> markOffline(Duration silentFor) {
        return jdbc.queryForList("""
                UPDATE devices SET status = 'OFFLINE'
                WHERE status <> 'OFFLINE' AND last_heartbeat < now() - (? * interval '1 millisecond')
                RETURNING id""", String.class, silentFor.toMillis());
    }

    private static DeviceRow row(ResultSet rs) throws SQLException {
        return new DeviceRow(rs.getString("id"), rs.getString("device_class"), rs.getString("host"), rs.getString("status"),
                Columns.instant(rs, "registered_at"), Columns.instant(rs, "last_heartbeat"), rs.getInt("in_flight"),
                rs.getLong("measured"), rs.getLong("recent") / (double) RATE_WINDOW.toMinutes(), Columns.json(rs, "failures"),
                rs.getString("compiler"), rs.getString("relayfarm_version"), Columns.json(rs, "capabilities"), Columns.json(rs, "hardware"));
    }
}
