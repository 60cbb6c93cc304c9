package dev.relayfarm.services.store;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.ScheduleRule;
import dev.relayfarm.tuning.ScheduleStatus;
import dev.relayfarm.tuning.StoredSchedule;
import dev.relayfarm.tuning.TuningTask;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The stored schedules codegen may apply (table {@code schedules}, ARCHITECTURE.md section 5): reads the rows
 * stored for a job's workloads and target, and leaves the choice to the library's {@link ScheduleRule} (pinned,
 * else approved and not measured slower than the template default on the same device; the template must
 * match) — the rule {@code relayc compile --schedules} applies to a file. {@code config} holds a
 * {@link ScheduleConfig} as JSON ({@code {"template": ..., "knobs": {...}}}).
 */
@Component
public class ScheduleStore {
    private static final Logger LOG = LoggerFactory.getLogger(ScheduleStore.class);
    private final JdbcTemplate jdbc;

    public ScheduleStore(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * The schedule {@link ScheduleRule} chooses per task's workload key for {@code target} on devices of
     * {@code deviceClass}; keys without one are absent. Rows from before schedules had a device class
     * ({@link Device#UNKNOWN_CLASS}) stand for the target's device, whichever class that is.
     */
    public Map<String, StoredSchedule> choose(List<TuningTask> tasks, Target target, String deviceClass) {
        Map<String, String> templates = new HashMap<>();
        for (TuningTask t : tasks) templates.put(t.key(), t.template());
        return choose(templates, target.toString(), deviceClass);
    }

    /**
     * The same choice per workload key, given the template each key's kernel uses ({@code templateByKey}): what the
     * dashboard shows as the schedule a new job would get.
     */
    public Map<String, StoredSchedule> choose(Map<String, String> templateByKey, String target, String deviceClass) {
        List<StoredSchedule> rows = stored(List.copyOf(templateByKey.keySet()), target, deviceClass);
        // the class's own schedules first; the old class-less rows only where none of the class's applies
        List<StoredSchedule> own = rows.stream().filter(s -> s.deviceClass().equals(deviceClass)).toList();
        List<StoredSchedule> old = rows.stream().filter(s -> !s.deviceClass().equals(deviceClass))
                .map(s -> new StoredSchedule(s.id(), s.workloadKey(), s.target(), deviceClass, s.config(), s.status(), s.costUs(), s.defaultCostUs())).toList();
        Map<String, StoredSchedule> out = new HashMap<>();
        templateByKey.forEach((key, template) -> ScheduleRule.choose(key, target, template, deviceClass, own)
                .or(() -> ScheduleRule.choose(key, target, template, deviceClass, old)).ifPresent(s -> out.put(key, s)));
        return out;
    }

    /** Every readable row for these workload keys and {@code target}, oldest first (the rule's tie-break: the latest). */
    private List<StoredSchedule> stored(List<String> workloadKeys, String target, String deviceClass) {
        List<StoredSchedule> out = new ArrayList<>();
        if (workloadKeys.isEmpty()) return out;
        String sql = """
                SELECT id, workload_key, target, config::text, status, cost_us, default_cost_us, device_class
                FROM schedules
                WHERE workload_key = ANY (?) AND target = ? AND device_class IN (?, ?)
                ORDER BY updated_at, id
                """;
        jdbc.query(con -> {
            var ps = con.prepareStatement(sql);
            Array keys = con.createArrayOf("text", workloadKeys.toArray());
            ps.setArray(1, keys);
            ps.setString(2, target);
            ps.setString(3, deviceClass);
            ps.setString(4, Device.UNKNOWN_CLASS);
            return ps;
        }, rs -> {
            try {
                ScheduleConfig config = ScheduleConfig.fromJson(rs.getString(4));
                out.add(new StoredSchedule(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(8), config, ScheduleStatus.valueOf(rs.getString(5)),
                        cost(rs, 6), cost(rs, 7)));
            } catch (IllegalArgumentException e) {
                // one unreadable row must not fail every job with that workload: the template default applies
                LOG.warn("schedules row {} ({}) has an unreadable config, ignored: {}", rs.getLong(1), rs.getString(2), e.getMessage());
            }
        });
        return out;
    }

    private static OptionalDouble cost(ResultSet rs, int column) throws SQLException {
        double v = rs.getDouble(column);
        return rs.wasNull() ? OptionalDouble.empty() : OptionalDouble.of(v);
    }
}
