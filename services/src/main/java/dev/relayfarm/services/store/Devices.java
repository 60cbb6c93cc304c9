package dev.relayfarm.services.store;

import java.util.Map;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Device;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The farm's devices (table {@code devices}): hardware agents register, heartbeat and count what they report
 * (their {@code HOST/NAME} row, see {@code HardwareAgent}); the gateway reads them, drains one on an operator's
 * request and marks silent ones OFFLINE; tuner workers ask what compiler and hardware a class has.
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

    private static final ObjectMapper DEVICE_JSON = new ObjectMapper();
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

    // --- what hardware agents write: registration, heartbeats, counts ---

    /** Registers (or re-registers after a restart) device {@code id}: ONLINE, fresh heartbeat, nothing in flight. */
    public void register(String id, String host, Device device, String compiler, String version, Map<String, Object> capabilities) {
        ObjectNode hw = DEVICE_JSON.createObjectNode();
        hw.put("arch", device.arch());
        hw.put("model", device.model());
        device.isa().forEach(hw.putArray("isa")::add);
        hw.put("cores", device.cores());
        jdbc.update("""
                INSERT INTO devices (id, device_class, host, capabilities, status, compiler, relayfarm_version, hardware, pid, in_flight, registered_at, last_heartbeat)
                VALUES (?, ?, ?, ?::jsonb, 'ONLINE', ?, ?, ?::jsonb, ?, 0, now(), now())
                ON CONFLICT (id) DO UPDATE SET device_class = EXCLUDED.device_class, host = EXCLUDED.host, capabilities = EXCLUDED.capabilities,
                    status = 'ONLINE', compiler = EXCLUDED.compiler, relayfarm_version = EXCLUDED.relayfarm_version, hardware = EXCLUDED.hardware,
                    pid = EXCLUDED.pid, in_flight = 0, registered_at = now(), last_heartbeat = now()
                """, id, device.deviceClass(), host, DEVICE_JSON.valueToTree(capabilities).toString(), compiler, version, hw.toString(), ProcessHandle.current().pid());
    }

    /**
     * A heartbeat: the time and what is in flight. A device the gateway marked OFFLINE while this agent was alive (a
     * long GC pause, a suspended VM) comes back ONLINE; a DRAINING one stays DRAINING. Returns the status after it,
     * empty when the row is gone.
     */
    public Optional<String> heartbeat(String id, int inFlight, java.util.UUID inFlightRequest) {
        return jdbc.query("""
                UPDATE devices SET last_heartbeat = now(), in_flight = ?, in_flight_request = ?,
                    status = CASE WHEN status = 'OFFLINE' THEN 'ONLINE' ELSE status END
                WHERE id = ? RETURNING status
                """, rs -> rs.next() ? Optional.of(rs.getString(1)) : Optional.empty(), inFlight, inFlightRequest, id);
    }

    /** Counts one reported batch: its measurements and its failures by type. */
    public void reported(String id, int measurements, Map<MeasureError, Integer> failures) {
        ObjectNode f = DEVICE_JSON.createObjectNode();
        failures.forEach((k, v) -> f.put(k.name(), v));
        jdbc.update("""
                UPDATE devices SET measured = measured + ?, in_flight = 0, in_flight_request = NULL, last_heartbeat = now(),
                    failures = (SELECT coalesce(jsonb_object_agg(k, coalesce((failures ->> k)::bigint, 0) + coalesce((?::jsonb ->> k)::bigint, 0)), '{}'::jsonb)
                                FROM (SELECT jsonb_object_keys(failures || ?::jsonb) AS k) keys)
                WHERE id = ?
                """, measurements, f.toString(), f.toString(), id);
    }

    /** A stopped agent: OFFLINE at once, not after the missed heartbeats. */
    public void offline(String id) {
        jdbc.update("UPDATE devices SET status = 'OFFLINE', in_flight = 0 WHERE id = ?", id);
    }

    /** Whether a device of {@code deviceClass} is ONLINE (a DRAINING one takes no new work). */
    public boolean anyAlive(String deviceClass) {
        return Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM devices WHERE device_class = ? AND status = 'ONLINE')", Boolean.class,
                deviceClass));
    }

    /** The compiler identity of the device of {@code deviceClass} heard from last, if any registered. */
    public Optional<String> compilerOf(String deviceClass) {
        return jdbc.query("SELECT compiler FROM devices WHERE device_class = ? AND compiler IS NOT NULL ORDER BY last_heartbeat DESC LIMIT 1",
                rs -> rs.next() ? Optional.of(rs.getString(1)) : Optional.empty(), deviceClass);
    }

    /** The hardware of the device of {@code deviceClass} heard from last, if any registered. */
    public Optional<Device> deviceOf(String deviceClass) {
        return jdbc.query("SELECT hardware::text FROM devices WHERE device_class = ? ORDER BY last_heartbeat DESC LIMIT 1", rs -> {
            if (!rs.next()) return Optional.<Device>empty();
            try {
                var hw = DEVICE_JSON.readTree(rs.getString(1));
                java.util.List<String> isa = new java.util.ArrayList<>();
                hw.path("isa").forEach(n -> isa.add(n.asText()));
                return Optional.of(new Device(deviceClass, hw.path("arch").asText("unknown"), hw.path("model").asText("unknown"), isa,
                        Math.max(1, hw.path("cores").asInt(1))));
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                return Optional.<Device>empty();
            }
        }, deviceClass);
    }
}
