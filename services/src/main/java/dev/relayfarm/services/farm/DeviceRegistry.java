package dev.relayfarm.services.farm;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.MeasureError;
import java.util.Map;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The {@code devices} rows as agents write them: registration (the row is the agent's, keyed by its stable id),
 * heartbeats, what is in flight, and the counts of measurements and failures. The gateway reads them, marks a device
 * DRAINING on an operator's request and OFFLINE after missed heartbeats.
 */
@Component
public class DeviceRegistry {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final JdbcTemplate jdbc;

    public DeviceRegistry(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** Registers (or re-registers after a restart) device {@code id}: ONLINE, fresh heartbeat, nothing in flight. */
    public void register(String id, String host, Device device, String compiler, String version, Map<String, Object> capabilities) {
        ObjectNode hw = JSON.createObjectNode();
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
                """, id, device.deviceClass(), host, JSON.valueToTree(capabilities).toString(), compiler, version, hw.toString(), ProcessHandle.current().pid());
    }

    /**
     * A heartbeat: the time and what is in flight. A device the gateway marked OFFLINE while this agent was alive (a
     * long GC pause, a suspended VM) comes back ONLINE; a DRAINING one stays DRAINING. Returns the status after it,
     * empty when the row is gone.
     */
    public Optional<String> heartbeat(String id, int inFlight) {
        return jdbc.query("""
                UPDATE devices SET last_heartbeat = now(), in_flight = ?, status = CASE WHEN status = 'OFFLINE' THEN 'ONLINE' ELSE status END
                WHERE id = ? RETURNING status
                """, rs -> rs.next() ? Optional.of(rs.getString(1)) : Optional.empty(), inFlight, id);
    }

    /** Counts one reported batch: its measurements and its failures by type. */
    public void reported(String id, int measurements, Map<MeasureError, Integer> failures) {
        ObjectNode f = JSON.createObjectNode();
        failures.forEach((k, v) -> f.put(k.name(), v));
        jdbc.update("""
                UPDATE devices SET measured = measured + ?, in_flight = 0, last_heartbeat = now(),
                    failures = (SELECT coalesce(jsonb_object_agg(k, coalesce((failures ->> k)::bigint, 0) + coalesce((?::jsonb ->> k)::bigint, 0)), '{}'::jsonb)
                                FROM (SELECT jsonb_object_keys(failures || ?::jsonb) AS k) keys)
                WHERE id = ?
                """, measurements, f.toString(), f.toString(), id);
    }

    /** A stopped agent: OFFLINE at once, not after the missed heartbeats. */
    public void offline(String id) {
        jdbc.update("UPDATE devices SET status = 'OFFLINE', in_flight = 0 WHERE id = ?", id);
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
                var hw = JSON.readTree(rs.getString(1));
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
