package dev.relayfarm.services.store;

import dev.relayfarm.kernel.template.ScheduleConfig;
import java.sql.Array;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The reviewed schedules codegen may apply (table {@code schedules}, ARCHITECTURE.md section 5): per
 * (workload, target) the row a reviewer PINNED, else an APPROVED one that is not slower than the template
 * default measured on the same device (when both costs are known). Pending and rejected rows never apply.
 * {@code config} holds a {@link ScheduleConfig} as JSON ({@code {"template": ..., "knobs": {...}}}).
 */
@Component
public class ScheduleStore {
    private static final Logger LOG = LoggerFactory.getLogger(ScheduleStore.class);
    private final JdbcTemplate jdbc;

    public ScheduleStore(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** A stored schedule chosen for a workload. */
    public record StoredSchedule(long id, String workloadKey, String template, ScheduleConfig config) {}

    /** The best applicable schedule per workload key for {@code target}; keys without one are absent. */
    public Map<String, StoredSchedule> best(List<String> workloadKeys, String target) {
        Map<String, StoredSchedule> out = new HashMap<>();
        if (workloadKeys.isEmpty()) return out;
        String sql = """
                SELECT DISTINCT ON (workload_key) id, workload_key, template, config::text
                FROM schedules
                WHERE workload_key = ANY (?) AND target = ?
                  AND (status = 'PINNED'
                       OR (status = 'APPROVED' AND (cost_us IS NULL OR default_cost_us IS NULL OR cost_us <= default_cost_us)))
                ORDER BY workload_key, (status = 'PINNED') DESC, cost_us ASC NULLS LAST, updated_at DESC
                """;
        jdbc.query(con -> {
            var ps = con.prepareStatement(sql);
            Array keys = con.createArrayOf("text", workloadKeys.toArray());
            ps.setArray(1, keys);
            ps.setString(2, target);
            return ps;
        }, rs -> {
            try {
                ScheduleConfig config = ScheduleConfig.fromJson(rs.getString(4));
                out.put(rs.getString(2), new StoredSchedule(rs.getLong(1), rs.getString(2), rs.getString(3), config));
            } catch (IllegalArgumentException e) {
                // one unreadable row must not fail every job with that workload: the template default applies
                LOG.warn("schedules row {} ({}) has an unreadable config, ignored: {}", rs.getLong(1), rs.getString(2), e.getMessage());
            }
        });
        return out;
    }
}
