package dev.relayfarm.services.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.Optional;
import java.util.OptionalDouble;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * {@code tuning_tasks} as tuner workers move them: claimed (RUNNING, by this worker, one more attempt), progress after
 * every round, finished with why. Runs create and cancel them ({@link TuningRuns}).
 */
@Component
public class TuningTasks {
    private final JdbcTemplate jdbc;

    public TuningTasks(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * Takes task {@code id} for {@code worker}: a PENDING one, or a RUNNING one (its worker died or lost it: the message
     * came back). Empty when it has ended (DONE, FAILED, CANCELLED): the message is then only acknowledged.
     */
    public Optional<TaskRow> claim(long id, String worker) {
        return jdbc.query("""
                UPDATE tuning_tasks SET status = 'RUNNING', worker = ?, attempts = attempts + 1, updated_at = now()
                WHERE id = ? AND status IN ('PENDING', 'RUNNING')
                RETURNING id, workload_key, template, target, device_class, strategy, ir_ref, trials_budget, batch, deadline, calls, status, attempts
                """, rs -> rs.next() ? Optional.of(row(rs)) : Optional.empty(), worker, id);
    }

    private static TaskRow row(ResultSet rs) throws SQLException {
        Timestamp deadline = rs.getTimestamp(10);
        return new TaskRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7),
                rs.getInt(8), rs.getInt(9), deadline == null ? null : deadline.toInstant(), rs.getInt(11), rs.getString(12), rs.getInt(13));
    }

    /** The task's row now (a run joining it raises its budget and deadline while a worker has it). */
    public Optional<TaskRow> find(long id) {
        return jdbc.query("""
                SELECT id, workload_key, template, target, device_class, strategy, ir_ref, trials_budget, batch, deadline, calls, status, attempts
                FROM tuning_tasks WHERE id = ?
                """, rs -> rs.next() ? Optional.of(row(rs)) : Optional.empty(), id);
    }

    /**
     * Of {@code ids}, the PENDING ones (a run's new tasks, and joined ones that no worker has taken yet: their first
     * announcement may have been lost; a duplicate is harmless) in the order to announce them on {@code tuning.tasks},
     * which workers take first come, first served: a
     * run's budget is often too short for all its workloads, so those where tuning pays come first — anchored
     * templates (convolutions, dense, pooling: compute-bound, a wide space) before injective ones (layout copies and
     * elementwise kernels, memory-bound, a few configs), then the ones the model calls most.
     */
    public java.util.List<Long> announceOrder(java.util.List<Long> ids) {
        if (ids.isEmpty()) return ids;
        return jdbc.query(con -> {
            var ps = con.prepareStatement("SELECT id FROM tuning_tasks WHERE id = ANY (?) AND status = 'PENDING' ORDER BY (template LIKE 'injective%'), calls DESC, id");
            ps.setArray(1, con.createArrayOf("bigint", ids.toArray()));
            return ps;
        }, (rs, i) -> rs.getLong(1));
    }

    /** The runs that hold the task (each one's status follows its tasks'). */
    public java.util.List<Long> runs(long id) {
        return jdbc.queryForList("SELECT run_id FROM tuning_run_tasks WHERE task_id = ?", Long.class, id);
    }

    /** The task's status now (a cancel comes from the gateway while the worker runs it). */
    public String status(long id) {
        return jdbc.queryForObject("SELECT status FROM tuning_tasks WHERE id = ?", String.class, id);
    }

    /**
     * Progress after a round: the task's candidate trials, the default's cost and its best candidate (from its records).
     * Only by the worker holding {@code attempt} (the claim's): false when another worker claimed the task since — this
     * one lost its message (a long pause, a rebalance) and must stop.
     */
    public boolean progress(long id, int attempt, OptionalDouble defaultUs) {
        return jdbc.update("""
                UPDATE tuning_tasks t SET trials = (SELECT count(DISTINCT config) FROM tuning_records r WHERE r.task_id = t.id AND r.position > 0),
                    default_cost_us = coalesce(?, default_cost_us),
                    best_cost_us = (SELECT cost_us FROM tuning_records r WHERE r.task_id = t.id AND r.position > 0 AND r.cost_us IS NOT NULL ORDER BY cost_us LIMIT 1),
                    best_config = (SELECT config FROM tuning_records r WHERE r.task_id = t.id AND r.position > 0 AND r.cost_us IS NOT NULL ORDER BY cost_us LIMIT 1),
                    updated_at = now()
                WHERE id = ? AND status = 'RUNNING' AND attempts = ?
                """, defaultUs.isPresent() ? defaultUs.getAsDouble() : null, id, attempt) == 1;
    }

    /** The distinct configs this task has measured (its trials: what its budget counts). */
    public int trials(long id) {
        Integer n = jdbc.queryForObject("SELECT count(DISTINCT config) FROM tuning_records WHERE task_id = ? AND position > 0", Integer.class, id);
        return n == null ? 0 : n;
    }

    /** Ends the task: DONE or FAILED, with why — by the worker holding {@code attempt}. A task cancelled meanwhile stays CANCELLED. */
    public boolean finish(long id, int attempt, String status, String note) {
        return jdbc.update("UPDATE tuning_tasks SET status = ?, note = ?, finished_at = now(), updated_at = now() WHERE id = ? AND status = 'RUNNING' AND attempts = ?",
                status, note, id, attempt) == 1;
    }


    /**
     * The farm's queue per device class: tasks waiting for a worker (PENDING) and being tuned (RUNNING), classes with
     * neither left out. What the dashboard's farm page shows as queue depth.
     */
    public java.util.List<ClassQueue> queues() {
        return jdbc.query("""
                SELECT device_class, count(*) FILTER (WHERE status = 'PENDING'), count(*) FILTER (WHERE status = 'RUNNING')
                FROM tuning_tasks WHERE status IN ('PENDING', 'RUNNING') GROUP BY 1 ORDER BY 1""",
                (rs, i) -> new ClassQueue(rs.getString(1), rs.getInt(2), rs.getInt(3)));
    }

    public record ClassQueue(String deviceClass, int pending, int running) {}
}
