package dev.relayfarm.services.gateway;

import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The rows tuner workers and hardware agents write (devices, schedules with their PROPOSED history, tuning records),
 * inserted with SQL so the gateway's side of the farm can be tested without them.
 */
final class FarmRows {
    private FarmRows() {}

    /** A device id nobody else uses. */
    static String uniqueId(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A device of {@code deviceClass}, {@code status}, whose last heartbeat was {@code secondsAgo} ago. */
    static void device(JdbcTemplate jdbc, String id, String deviceClass, String status, int secondsAgo) {
        jdbc.update("""
                INSERT INTO devices (id, device_class, host, status, last_heartbeat, capabilities, compiler, relayfarm_version, in_flight, measured, failures)
                VALUES (?, ?, 'host-1', ?, now() - (? * interval '1 second'), '{"cores": 2}'::jsonb, 'gcc 13.3.0', '0.1.0', 3, 42, '{"TIMEOUT": 2}'::jsonb)""",
                id, deviceClass, status, secondsAgo);
    }

    /** A schedule as a worker proposes it (status PENDING, history PROPOSED by {@code worker}); returns its id. */
    static long proposed(JdbcTemplate jdbc, String workload, String deviceClass, double costUs, double defaultCostUs, int measurements, String worker) {
        long id = jdbc.queryForObject("""
                INSERT INTO schedules (workload_key, target, template, config, cost_us, default_cost_us, device_class, measurements)
                VALUES (?, 'c -mcpu=native', 'dense_pack.x86', '{"template": "dense_pack.x86", "knobs": {"tile_x": 8}}'::jsonb, ?, ?, ?, ?)
                RETURNING id""", Long.class, workload, costUs, defaultCostUs, deviceClass, measurements);
        jdbc.update("""
                INSERT INTO schedule_history (schedule_id, action, status, actor, config, cost_us)
                SELECT id, 'PROPOSED', status, ?, config, cost_us FROM schedules WHERE id = ?""", worker, id);
        return id;
    }

    /** A measurement of {@code workload} on {@code deviceId} (null: none), {@code minutesAgo} ago; cost null means a TIMEOUT. */
    static void record(JdbcTemplate jdbc, String workload, String deviceClass, String deviceId, Double costUs, int tileX, int minutesAgo) {
        jdbc.update("""
                INSERT INTO tuning_records (workload_key, target, device_id, config, cost_us, error, error_detail, template, device_class, compiler,
                                            relayfarm_version, cv, number, repeat, default_cost_us, measured_at)
                VALUES (?, 'c -mcpu=native', ?, ?::jsonb, ?, ?, ?, 'dense_pack.x86', ?, 'gcc 13.3.0', '0.1.0', ?, ?, ?, 20.0,
                        now() - (? * interval '1 minute'))""",
                workload, deviceId, "{\"template\": \"dense_pack.x86\", \"knobs\": {\"tile_x\": " + tileX + "}}", costUs,
                costUs == null ? "TIMEOUT" : null, costUs == null ? "killed after 10 s" : null, deviceClass,
                costUs == null ? null : 0.01, costUs == null ? null : 100, costUs == null ? null : 5, minutesAgo);
    }
}
