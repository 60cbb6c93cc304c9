package dev.relayfarm.services.farm;

import dev.relayfarm.tuning.record.TuningRecord;
import java.util.List;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Tuning records in {@code tuning_records}. The library's JSON form of a record ({@link TuningRecord#toJson}) uses the
 * table's column names, so a row is written from it with {@code jsonb_populate_record} and read back as
 * {@code to_jsonb(row)}: one mapping, the library's, for files, messages and the table.
 */
@Component
public class RecordRows {
    private final JdbcTemplate jdbc;

    public RecordRows(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * Writes {@code record} of measure request {@code requestId} at {@code position} (0: the default) unless that
     * position of that request is written already; returns whether it wrote it.
     */
    public boolean insert(TuningRecord record, Long taskId, String deviceId, UUID requestId, int position) {
        int n = jdbc.update("""
                INSERT INTO tuning_records (task_id, device_id, request_id, position, workload_key, target, config, cost_us, error, error_detail,
                                            measured_at, template, device_class, hardware, compiler, relayfarm_version, cv, number, repeat, default_cost_us)
                SELECT ?, ?, ?, ?, r.workload_key, r.target, r.config, r.cost_us, r.error, r.error_detail,
                       r.measured_at, r.template, r.device_class, r.hardware, r.compiler, r.relayfarm_version, r.cv, r.number, r.repeat, r.default_cost_us
                FROM jsonb_populate_record(NULL::tuning_records, ?::jsonb) r
                ON CONFLICT (request_id, position) WHERE request_id IS NOT NULL DO NOTHING
                """, taskId, deviceId, requestId, position, record.toJson());
        return n == 1;
    }

    /** The records of a workload for a target and device class, oldest first. */
    public List<TuningRecord> of(String workloadKey, String target, String deviceClass) {
        return jdbc.query("SELECT to_jsonb(r)::text FROM tuning_records r WHERE workload_key = ? AND target = ? AND device_class = ? ORDER BY id",
                (rs, i) -> TuningRecord.fromJson(rs.getString(1)), workloadKey, target, deviceClass);
    }
}
