package dev.relayfarm.services.store;

import static dev.relayfarm.services.store.Columns.instant;
import static dev.relayfarm.services.store.Columns.json;
import static dev.relayfarm.services.store.Columns.nullableDouble;
import static dev.relayfarm.services.store.Columns.nullableInt;
import static dev.relayfarm.services.store.Columns.nullableLong;

import dev.relayfarm.tuning.record.TuningRecord;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The review of proposed schedules (tables {@code schedules} and {@code schedule_history}, V5): what reviewers list
 * and read, their decisions, and the auto-approve policy ({@link AutoApproveProperties}) a tuner worker applies after
 * proposing. Every decision updates the row and appends its history row in one transaction, under the row's lock, so
 * the history is the row's exact past. Which schedule codegen then applies is {@link ScheduleStore}'s (the library's
 * ScheduleRule); this class only changes review state. No role: the gateway and the workers both use it.
 */
@Component
@EnableConfigurationProperties(AutoApproveProperties.class)
public class ScheduleReviews {
    /** The actor and reviewer the policy's decisions are recorded with. */
    public static final String AUTO_APPROVE = "auto-approve";
    /** Trials shown with a schedule: the best ones; a task measures hundreds. */
    static final int TRIALS = 200;
    private static final Logger LOG = LoggerFactory.getLogger(ScheduleReviews.class);
    private static final String SELECT = """
            SELECT id, workload_key, target, device_class, template, config::text, cost_us, default_cost_us, measurements, record_id, task_id,
                   status, reviewer, note, created_at, updated_at
            FROM schedules
            """;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final AutoApproveProperties policy;

    public ScheduleReviews(JdbcTemplate jdbc, TransactionTemplate tx, AutoApproveProperties policy) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.policy = policy;
    }

    /** The schedules {@code filter} selects, most recently updated first. */
    public List<ScheduleRow> list(ScheduleFilter filter) {
        StringBuilder where = new StringBuilder(" WHERE true");
        List<Object> args = new ArrayList<>();
        if (filter.workload() != null) {
            where.append(" AND workload_key = ?");
            args.add(filter.workload());
        }
        if (filter.target() != null) {
            where.append(" AND target = ?");
            args.add(filter.target());
        }
        if (filter.status() != null) {
            where.append(" AND status = ?");
            args.add(filter.status());
        }
        if (filter.deviceClass() != null) {
            where.append(" AND device_class = ?");
            args.add(filter.deviceClass());
        }
        if (filter.minSpeedup() != null) {
            // in SQL, before the limit: a filter applied after it would drop matches beyond the newest rows
            where.append(" AND cost_us > 0 AND default_cost_us >= ? * cost_us");
            args.add(filter.minSpeedup());
        }
        args.add(filter.limit());
        return jdbc.query(SELECT + where + " ORDER BY updated_at DESC, id DESC LIMIT ?", (rs, i) -> row(rs), args.toArray());
    }

    public Optional<ScheduleRow> find(long id) {
        return jdbc.query(SELECT + " WHERE id = ?", (rs, i) -> row(rs), id).stream().findFirst();
    }

    /** The schedule's decisions, oldest first. */
    public List<ScheduleHistoryRow> history(long scheduleId) {
        return jdbc.query("""
                SELECT id, action, status, actor, note, config::text, cost_us, at FROM schedule_history WHERE schedule_id = ? ORDER BY id""",
                (rs, i) -> new ScheduleHistoryRow(rs.getLong("id"), rs.getString("action"), rs.getString("status"), rs.getString("actor"),
                        rs.getString("note"), json(rs, "config"), nullableDouble(rs, "cost_us"), instant(rs, "at")), scheduleId);
    }

    /**
     * The measurements of the schedule's workload on its target and device class, fastest first (failures last), at
     * most {@value #TRIALS}: the evidence for or against the proposed config.
     */
    public List<TrialRow> trials(ScheduleRow s) {
        return jdbc.query("""
                SELECT id, task_id, device_id, config::text, cost_us, cv, number, repeat, default_cost_us, error, error_detail, compiler, measured_at
                FROM tuning_records WHERE workload_key = ? AND target = ? AND device_class = ?
                ORDER BY cost_us NULLS LAST, id LIMIT ?""",
                (rs, i) -> new TrialRow(rs.getLong("id"), nullableLong(rs, "task_id"), rs.getString("device_id"), json(rs, "config"),
                        nullableDouble(rs, "cost_us"), nullableDouble(rs, "cv"), nullableInt(rs, "number"), nullableInt(rs, "repeat"),
                        nullableDouble(rs, "default_cost_us"), rs.getString("error"), rs.getString("error_detail"), rs.getString("compiler"),
                        instant(rs, "measured_at")), s.workloadKey(), s.target(), s.deviceClass(), TRIALS);
    }

    /**
     * Records {@code reviewer}'s decision: the schedule's status, reviewer, note and updated_at, and a history row.
     * Empty when there is no such schedule. The caller checks what its policy needs (a note for a rejection); the
     * reviewer is whoever the caller authenticated, never something a client wrote in a body. Unpinning a schedule that
     * is not PINNED throws {@link NotPinned}, with nothing changed.
     */
    public Optional<ScheduleRow> decide(long id, ScheduleDecision decision, String reviewer, String note) {
        Objects.requireNonNull(decision, "decision");
        if (reviewer == null || reviewer.isBlank()) throw new IllegalArgumentException("a decision needs a reviewer");
        return tx.execute(s -> {
            if (!lock(id)) return Optional.<ScheduleRow>empty();
            if (decision == ScheduleDecision.UNPIN) {
                String now = jdbc.queryForObject("SELECT status FROM schedules WHERE id = ?", String.class, id);
                if (!"PINNED".equals(now)) throw new NotPinned(id, now);
            }
            record(id, decision.status, decision.action, reviewer, note);
            return find(id);
        });
    }

    /**
     * Approves the PENDING schedule {@code scheduleId} if the auto-approve policy ({@code relayfarm.farm.auto-approve.*})
     * is on and the schedule meets it: measured at least {@code min-speedup} times faster than the template default on
     * the same device, over at least {@code min-measurements} measurements. Then its status is APPROVED, its reviewer
     * {@value #AUTO_APPROVE}, and its history gets an AUTO_APPROVED row whose note gives the numbers. Tuner workers call
     * this right after proposing (PROPOSED); a schedule a reviewer already decided on is never touched. The answer says
     * why it was or was not approved.
     */
    public AutoApproval autoApproveIfEligible(long scheduleId) {
        if (!policy.enabled()) return new AutoApproval(scheduleId, false, "auto-approve is off (relayfarm.farm.auto-approve.enabled=false)");
        AutoApproval result = tx.execute(s -> {
            if (!lock(scheduleId)) return new AutoApproval(scheduleId, false, "no schedule " + scheduleId);
            ScheduleRow row = find(scheduleId).orElseThrow();
            if (!row.status().equals("PENDING")) {
                return new AutoApproval(scheduleId, false, "schedule " + scheduleId + " is " + row.status() + ": only PENDING schedules are auto-approved");
            }
            if (row.costUs() == null || row.defaultCostUs() == null || row.costUs() <= 0) {
                return new AutoApproval(scheduleId, false, "schedule " + scheduleId + " has no cost and template-default cost to compare");
            }
            double speedup = row.defaultCostUs() / row.costUs();
            if (speedup < policy.minSpeedup()) {
                return new AutoApproval(scheduleId, false, String.format(Locale.ROOT,
                        "speedup %.3fx is below relayfarm.farm.auto-approve.min-speedup %.3f", speedup, policy.minSpeedup()));
            }
            if (row.measurements() < policy.minMeasurements()) {
                return new AutoApproval(scheduleId, false, row.measurements() + " measurement(s), relayfarm.farm.auto-approve.min-measurements is "
                        + policy.minMeasurements());
            }
            String note = String.format(Locale.ROOT, "%.3fx faster than the template default (%.3f us vs %.3f us) over %d measurements;"
                    + " policy: min-speedup %.3f, min-measurements %d", speedup, row.costUs(), row.defaultCostUs(), row.measurements(),
                    policy.minSpeedup(), policy.minMeasurements());
            record(scheduleId, "APPROVED", "AUTO_APPROVED", AUTO_APPROVE, note);
            return new AutoApproval(scheduleId, true, note);
        });
        LOG.info("auto-approve schedule {}: {} ({})", scheduleId, result.approved() ? "APPROVED" : "not approved", result.reason());
        return result;
    }

    /** Locks the schedule's row for the rest of the transaction; false when there is none. */
    private boolean lock(long id) {
        return !jdbc.queryForList("SELECT id FROM schedules WHERE id = ? FOR UPDATE", Long.class, id).isEmpty();
    }

    private void record(long id, String status, String action, String actor, String note) {
        jdbc.update("UPDATE schedules SET status = ?, reviewer = ?, note = ?, updated_at = now() WHERE id = ?", status, actor, note, id);
        jdbc.update("""
                INSERT INTO schedule_history (schedule_id, action, status, actor, note, config, cost_us)
                SELECT id, ?, status, ?, ?, config, cost_us FROM schedules WHERE id = ?""", action, actor, note, id);
    }

    private static ScheduleRow row(ResultSet rs) throws SQLException {
        Double cost = nullableDouble(rs, "cost_us");
        Double def = nullableDouble(rs, "default_cost_us");
        Double speedup = cost != null && def != null && cost > 0 ? def / cost : null;
        return new ScheduleRow(rs.getLong("id"), rs.getString("workload_key"), rs.getString("target"), rs.getString("device_class"),
                rs.getString("template"), json(rs, "config"), cost, def, speedup, rs.getInt("measurements"),
                nullableLong(rs, "record_id"), nullableLong(rs, "task_id"), rs.getString("status"), rs.getString("reviewer"), rs.getString("note"),
                instant(rs, "created_at"), instant(rs, "updated_at"));
    }

    /**
     * Proposes {@code best} (a record that beat its default, confirmed by a second measurement) as the schedule of its
     * workload, target and device class: a new PENDING row, or a PENDING or REJECTED row with another config updated
     * to it. An APPROVED or PINNED row stays as the reviewer left it (jobs keep applying it; a better config waits for
     * the next review of the records). Returns the schedule id when something was proposed. History: a PROPOSED row.
     */
    public Optional<Long> propose(long taskId, TuningRecord best, int measurements, String worker) {
        return tx.execute(st -> {
            Long id = jdbc.query("""
                    INSERT INTO schedules (workload_key, target, device_class, template, config, cost_us, default_cost_us, record_id, task_id, measurements, status)
                    VALUES (?, ?, ?, ?, ?::jsonb, ?, ?, (SELECT max(id) FROM tuning_records WHERE task_id = ? AND config = ?::jsonb AND cost_us IS NOT NULL),
                            ?, ?, 'PENDING')
                    ON CONFLICT (workload_key, target, device_class) DO UPDATE SET template = EXCLUDED.template, config = EXCLUDED.config,
                        cost_us = EXCLUDED.cost_us, default_cost_us = EXCLUDED.default_cost_us, record_id = EXCLUDED.record_id, task_id = EXCLUDED.task_id,
                        measurements = EXCLUDED.measurements, status = 'PENDING', reviewer = NULL, note = NULL, updated_at = now()
                    WHERE schedules.status = 'PENDING' OR schedules.status = 'REJECTED' AND schedules.config <> EXCLUDED.config
                    RETURNING id
                    """, rs -> rs.next() ? rs.getLong(1) : null, best.workloadKey(), best.target(), best.deviceClass(), best.template(),
                    best.config().toJson(), best.costUs(), best.defaultCostUs().isPresent() ? (Double) best.defaultCostUs().getAsDouble() : null, taskId, best.config().toJson(), taskId, measurements);
            if (id == null) return Optional.<Long>empty();
            jdbc.update("INSERT INTO schedule_history (schedule_id, action, status, actor, note, config, cost_us) VALUES (?, 'PROPOSED', 'PENDING', ?, ?, ?::jsonb, ?)",
                    id, worker, "task " + taskId, best.config().toJson(), best.costUs());
            return Optional.of(id);
        });
    }

    /** An unpin of a schedule that is not PINNED (checked under the row's lock). */
    public static final class NotPinned extends RuntimeException {
        public final String status;

        NotPinned(long id, String status) {
            super("schedule " + id + " is " + status + ", not PINNED: there is no pin to take back");
            this.status = status;
        }
    }
}
