package dev.relayfarm.services.store;

import static dev.relayfarm.services.store.Columns.nullableDouble;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.tuning.StoredSchedule;
import java.sql.Array;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The dashboard's review queue and tuning curves: schedules ({@link ScheduleReviews#list}) joined with the runs that
 * tuned their workloads (which models, what share of their time) and the schedule a new job would get
 * ({@link ScheduleStore#choose}). Three queries whatever the number of rows, so a queue of 500 schedules over
 * 10,000 records renders in well under the 300 ms issue 17 allows (DashboardRenderBenchmark measures it).
 */
@Component
public class ReviewQueue {
    private final JdbcTemplate jdbc;
    private final ScheduleReviews reviews;
    private final ScheduleStore store;

    public ReviewQueue(JdbcTemplate jdbc, ScheduleReviews reviews, ScheduleStore store) {
        this.jdbc = jdbc;
        this.reviews = reviews;
        this.store = store;
    }

    /** The schedules {@code filter} selects, with their models and what a new job gets. */
    public List<ReviewItem> list(ScheduleFilter filter) {
        return items(reviews.list(filter));
    }

    /** The one schedule as a queue row. */
    public ReviewItem item(ScheduleRow row) {
        return items(List.of(row)).getFirst();
    }

    private List<ReviewItem> items(List<ScheduleRow> rows) {
        Map<String, List<ReviewItem.ModelShare>> models = models(rows);
        // what a new job gets, asked once per (target, device class) for all of its workloads
        Map<String, Map<String, String>> templatesByGroup = new LinkedHashMap<>();
        for (ScheduleRow r : rows) templatesByGroup.computeIfAbsent(r.target() + "\n" + r.deviceClass(), k -> new HashMap<>()).put(r.workloadKey(), r.template());
        Map<String, StoredSchedule> chosen = new HashMap<>();
        templatesByGroup.forEach((group, templates) -> {
            String[] tc = group.split("\n", 2);
            store.choose(templates, tc[0], tc[1]).forEach((key, s) -> chosen.put(group + "\n" + key, s));
        });
        List<ReviewItem> out = new ArrayList<>(rows.size());
        for (ScheduleRow r : rows) {
            StoredSchedule s = chosen.get(r.target() + "\n" + r.deviceClass() + "\n" + r.workloadKey());
            out.add(new ReviewItem(r, models.getOrDefault(key(r.workloadKey(), r.target(), r.deviceClass()), List.of()),
                    new ReviewItem.NewJobsGet(s == null ? null : s.id(), s == null ? null : s.status().name())));
        }
        return out;
    }

    /**
     * Per workload (key, target, class) of {@code rows}: the models of the runs that tuned it and its share of each
     * run's tunable time (calls x default cost over the run's sum), largest first.
     */
    private Map<String, List<ReviewItem.ModelShare>> models(List<ScheduleRow> rows) {
        Map<String, List<ReviewItem.ModelShare>> out = new HashMap<>();
        if (rows.isEmpty()) return out;
        String sql = """
                WITH run_tasks AS (
                    -- a share only once every task of the run has its default measured: a partial sum would inflate it
                    SELECT r.model_name, t.workload_key, t.target, t.device_class,
                           CASE WHEN count(*) OVER w = count(t.default_cost_us) OVER w
                                THEN t.calls * t.default_cost_us / nullif(sum(t.calls * t.default_cost_us) OVER w, 0) END AS share
                    FROM tuning_runs r JOIN tuning_run_tasks x ON x.run_id = r.id JOIN tuning_tasks t ON t.id = x.task_id
                    WHERE r.id IN (SELECT x2.run_id FROM tuning_run_tasks x2 JOIN tuning_tasks t2 ON t2.id = x2.task_id WHERE t2.workload_key = ANY (?))
                    WINDOW w AS (PARTITION BY r.id)
                )
                SELECT workload_key, target, device_class, model_name, max(share) AS share
                FROM run_tasks WHERE workload_key = ANY (?)
                GROUP BY 1, 2, 3, 4 ORDER BY 5 DESC NULLS LAST, 4
                """;
        Object[] keys = rows.stream().map(ScheduleRow::workloadKey).distinct().toArray();
        jdbc.query(con -> {
            var ps = con.prepareStatement(sql);
            Array a = con.createArrayOf("text", keys);
            ps.setArray(1, a);
            ps.setArray(2, a);
            return ps;
        }, rs -> {
            out.computeIfAbsent(key(rs.getString(1), rs.getString(2), rs.getString(3)), k -> new ArrayList<>())
                    .add(new ReviewItem.ModelShare(rs.getString(4), nullableDouble(rs, "share")));
        });
        return out;
    }

    private static String key(String workload, String target, String deviceClass) {
        return workload + "\n" + target + "\n" + deviceClass;
    }

    /**
     * The tuning curve of the schedule's workload: every measurement on its target and device class in the order
     * made, with the strategy of the task that made it; the best cost so far per strategy is the curve.
     */
    public List<CurvePoint> curve(ScheduleRow s) {
        return jdbc.query("""
                SELECT r.id, coalesce(t.strategy, 'import') AS strategy, r.cost_us FROM tuning_records r LEFT JOIN tuning_tasks t ON t.id = r.task_id
                WHERE r.workload_key = ? AND r.target = ? AND r.device_class = ? ORDER BY r.id""",
                (rs, i) -> new CurvePoint(rs.getLong(1), rs.getString(2), nullableDouble(rs, "cost_us")), s.workloadKey(), s.target(), s.deviceClass());
    }

    /** One measurement on a tuning curve; {@code costUs} null for a failed one (it still counts as a trial). */
    public record CurvePoint(long recordId, String strategy, Double costUs) {}

    /**
     * The template default's config as measured for the workload: the record whose cost is its own batch's default
     * cost (the default is measured in every batch, and its record carries its own cost as the default's). Empty when
     * no batch measured the default successfully.
     */
    public Optional<JsonNode> defaultConfig(ScheduleRow s) {
        return jdbc.query("""
                SELECT config::text FROM tuning_records
                WHERE workload_key = ? AND target = ? AND device_class = ? AND template = ? AND cost_us = default_cost_us
                ORDER BY id LIMIT 1""", (rs, i) -> Columns.json(rs, "config"), s.workloadKey(), s.target(), s.deviceClass(), s.template())
                .stream().findFirst();
    }
}
