package dev.relayfarm.services.store;

import static dev.relayfarm.services.store.Columns.instant;
import static dev.relayfarm.services.store.Columns.nullableDouble;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.scheduler.Tuner;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Tuning runs (tables {@code tuning_runs}, {@code tuning_run_tasks}, {@code tuning_tasks}, V5): what a user or a job
 * asked the farm to tune, and the tasks tuner workers take. A task is shared: one live task (PENDING or RUNNING) per
 * workload, target and device class (the partial unique index {@code tuning_tasks_live}), which every run needing that
 * workload joins instead of tuning it again. The caller announces the tasks {@link #create} made new on Kafka
 * ({@code tuning.tasks}); this class knows nothing of Kafka. No role: the gateway and the autotuner stage both create
 * runs.
 */
@Component
public class TuningRuns {
    /** Candidates a worker measures per round, for tasks created here ({@code tuning_tasks.batch}). */
    public static final int DEFAULT_BATCH = 8;
    /** How often {@link #create} tries a workload whose live task keeps ending between its insert and its join. */
    private static final int JOIN_TRIES = 5;
    private static final String LIVE = "('PENDING', 'RUNNING')";
    private static final String ENDED = "('DONE', 'FAILED', 'CANCELLED')";
    private static final String SUMMARY = """
            SELECT r.id, r.job_id, r.model_name, r.target, r.device_class, r.strategy, r.budget_ms, r.trials_per_task, r.status, r.created_by,
                   r.created_at, r.updated_at,
                   count(t.id) AS tasks,
                   count(t.id) FILTER (WHERE t.status IN %1$s) AS ended,
                   count(t.id) FILTER (WHERE t.status = 'DONE') AS done,
                   count(t.id) FILTER (WHERE t.status = 'FAILED') AS failed,
                   coalesce(sum(t.trials), 0) AS trials,
                   coalesce(sum(t.trials_budget), 0) AS budget,
                   coalesce(sum(CASE WHEN t.status IN %1$s THEN t.trials_budget ELSE LEAST(t.trials, t.trials_budget) END), 0) AS progressed
            FROM tuning_runs r
            LEFT JOIN tuning_run_tasks rt ON rt.run_id = r.id
            LEFT JOIN tuning_tasks t ON t.id = rt.task_id
            """.formatted(ENDED);

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    public TuningRuns(JdbcTemplate jdbc, TransactionTemplate tx) {
        this.jdbc = jdbc;
        this.tx = tx;
    }

    /**
     * The workloads of an optimized module for {@code target}: its tuning tasks ({@link Stages#tasks}, one per workload
     * key) weighted by how often a model run calls them ({@link Tuner#callsPerWorkload}).
     */
    public static List<RunWorkload> workloads(IRModule optimized, Target target) {
        List<TuningTask> tasks = Stages.tasks(optimized, target);
        Map<String, Integer> calls = Tuner.callsPerWorkload(optimized, tasks);
        Map<String, RunWorkload> out = new LinkedHashMap<>();
        for (TuningTask t : tasks) out.putIfAbsent(t.key(), new RunWorkload(t.key(), t.template(), Math.max(1, calls.getOrDefault(t.key(), 1))));
        return List.copyOf(out.values());
    }

    /**
     * Records the run and its tasks in one transaction: per workload, joins the live task of the same workload, target
     * and device class if there is one (raising its trial budget and deadline to at least this run's, so joining never
     * gives a run less than it asked for), else inserts a PENDING task (budget {@code trialsPerTask}, batch
     * {@value #DEFAULT_BATCH}, deadline now + budget, the workload's calls, the run's strategy and module). Races with
     * other runs are settled by {@code tuning_tasks_live}: insert-or-nothing, then join what is there. Workloads are
     * taken in key order, the order {@link #cancel} locks tasks in, so the two never deadlock.
     *
     * @return the run's id and the ids of the tasks it created (announce each on {@code tuning.tasks} once this returns)
     *         and joined
     */
    public TuningRunCreated create(NewTuningRun run) {
        return tx.execute(s -> {
            Long runId = jdbc.queryForObject("""
                    INSERT INTO tuning_runs (job_id, model_name, ir_ref, target, device_class, strategy, budget_ms, trials_per_task, created_by)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""", Long.class, run.jobId(), run.modelName(), run.irRef(), run.target(),
                    run.deviceClass(), run.strategy(), run.budget().toMillis(), run.trialsPerTask(), run.createdBy());
            List<Long> created = new ArrayList<>();
            List<Long> joined = new ArrayList<>();
            Map<String, RunWorkload> byKey = new TreeMap<>();
            for (RunWorkload w : run.workloads()) byKey.putIfAbsent(w.workloadKey(), w);
            for (RunWorkload w : byKey.values()) {
                long task = taskFor(run, w, created, joined);
                jdbc.update("INSERT INTO tuning_run_tasks (run_id, task_id) VALUES (?, ?) ON CONFLICT DO NOTHING", runId, task);
            }
            return new TuningRunCreated(runId, created, joined);
        });
    }

    /** The live task of {@code w} for the run, inserted or joined; its id goes to {@code created} or {@code joined}. */
    private long taskFor(NewTuningRun run, RunWorkload w, List<Long> created, List<Long> joined) {
        long budgetMs = run.budget().toMillis();
        for (int i = 0; i < JOIN_TRIES; i++) {
            List<Long> inserted = jdbc.queryForList("""
                    INSERT INTO tuning_tasks (job_id, workload_key, template, target, device_class, strategy, ir_ref, trials_budget, batch, deadline, calls)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now() + (? * interval '1 millisecond'), ?)
                    ON CONFLICT (workload_key, target, device_class) WHERE status IN %s DO NOTHING
                    RETURNING id""".formatted(LIVE), Long.class, run.jobId(), w.workloadKey(), w.template(), run.target(), run.deviceClass(),
                    run.strategy(), run.irRef(), run.trialsPerTask(), DEFAULT_BATCH, budgetMs, w.calls());
            if (!inserted.isEmpty()) {
                created.add(inserted.getFirst());
                return inserted.getFirst();
            }
            // A live task exists (or a concurrent run's insert just committed one). The update locks it, and re-checks
            // its status after any lock wait: a task cancelled or finished meanwhile is not joined, and the loop inserts.
            List<Long> live = jdbc.queryForList("""
                    UPDATE tuning_tasks SET trials_budget = GREATEST(trials_budget, ?), deadline = GREATEST(deadline, now() + (? * interval '1 millisecond')),
                           updated_at = now()
                    WHERE workload_key = ? AND target = ? AND device_class = ? AND status IN %s
                    RETURNING id""".formatted(LIVE), Long.class, run.trialsPerTask(), budgetMs, w.workloadKey(), run.target(), run.deviceClass());
            if (!live.isEmpty()) {
                joined.add(live.getFirst());
                return live.getFirst();
            }
        }
        throw new IllegalStateException("workload " + w.workloadKey() + " on " + run.target() + " / " + run.deviceClass() + ": its live task ended "
                + JOIN_TRIES + " times between inserting and joining; tasks are being created and cancelled faster than a run can start");
    }

    /** The run with its tasks (heaviest workloads first). */
    public Optional<TuningRunView> find(long id) {
        Optional<TuningRunView> summary = jdbc.query(SUMMARY + " WHERE r.id = ? GROUP BY r.id", (rs, i) -> summary(rs, List.of()), id).stream().findFirst();
        return summary.map(r -> withTasks(r, tasks(id)));
    }

    /** Runs, newest first, without their tasks. */
    public List<TuningRunView> list(int limit) {
        return jdbc.query(SUMMARY + " GROUP BY r.id ORDER BY r.id DESC LIMIT ?", (rs, i) -> summary(rs, List.of()), limit);
    }

    /** The run's current status (see {@link TuningRunView#status}), empty for an unknown run. */
    public Optional<String> status(long id) {
        return jdbc.query(SUMMARY + " WHERE r.id = ? GROUP BY r.id", (rs, i) -> summary(rs, List.of()).status(), id).stream().findFirst();
    }

    /**
     * Stores the status a RUNNING run has by now: DONE once all its tasks ended (FAILED when none of them is DONE and
     * some FAILED). A worker that ends a task may call it for the task's runs; reads compute the same without it.
     * Returns the status, empty for an unknown run.
     */
    public Optional<String> refreshStatus(long runId) {
        return tx.execute(s -> {
            Optional<String> now = status(runId);
            now.filter(st -> !st.equals("RUNNING"))
                    .ifPresent(st -> jdbc.update("UPDATE tuning_runs SET status = ?, updated_at = now() WHERE id = ? AND status = 'RUNNING'", st, runId));
            return jdbc.queryForList("SELECT status FROM tuning_runs WHERE id = ?", String.class, runId).stream().findFirst();
        });
    }

    /**
     * Cancels a RUNNING run: it becomes CANCELLED, and so do its live tasks that no other RUNNING run needs (note
     * {@code cancelled with tuning run N}); a worker on one of them sees the status and stops. Tasks shared with
     * another live run go on. Empty for an unknown run; a run that already ended is left as it is.
     */
    public Optional<TuningRunCancel> cancel(long runId) {
        return tx.execute(s -> {
            if (jdbc.queryForList("SELECT id FROM tuning_runs WHERE id = ? FOR UPDATE", Long.class, runId).isEmpty()) {
                return Optional.<TuningRunCancel>empty();
            }
            String before = refreshStatus(runId).orElseThrow();
            if (!before.equals("RUNNING")) return Optional.of(new TuningRunCancel(before, false, List.of()));
            // lock the live tasks in create's order first: a run joining one of them meanwhile has committed its link by
            // the time the update below reads the other runs
            jdbc.queryForList("""
                    SELECT t.id FROM tuning_tasks t JOIN tuning_run_tasks rt ON rt.task_id = t.id
                    WHERE rt.run_id = ? AND t.status IN %s ORDER BY t.workload_key FOR UPDATE OF t""".formatted(LIVE), Long.class, runId);
            jdbc.update("UPDATE tuning_runs SET status = 'CANCELLED', updated_at = now() WHERE id = ?", runId);
            List<Long> tasks = jdbc.queryForList("""
                    UPDATE tuning_tasks t SET status = 'CANCELLED', note = ?, finished_at = now(), updated_at = now()
                    WHERE t.id IN (SELECT task_id FROM tuning_run_tasks WHERE run_id = ?) AND t.status IN %s
                      AND NOT EXISTS (SELECT 1 FROM tuning_run_tasks o JOIN tuning_runs r ON r.id = o.run_id
                                      WHERE o.task_id = t.id AND o.run_id <> ? AND r.status = 'RUNNING')
                    RETURNING t.id""".formatted(LIVE), Long.class, "cancelled with tuning run " + runId, runId, runId);
            return Optional.of(new TuningRunCancel(before, true, tasks.stream().sorted().toList()));
        });
    }

    /**
     * The job a run would tune: its row and the optimized module its {@code optimizerStage} stored
     * ({@code stage_results.output}, the envelope the stage produced, field {@code irRef}). Empty for an unknown job.
     */
    public Optional<JobModule> jobModule(UUID jobId, String optimizerStage) {
        return jdbc.query("""
                SELECT j.status, j.model_name, j.target, sr.output ->> 'irRef' AS ir_ref
                FROM jobs j LEFT JOIN stage_results sr ON sr.job_id = j.id AND sr.stage = ?
                WHERE j.id = ?""", (rs, i) -> new JobModule(jobId, rs.getString("status"), rs.getString("model_name"), rs.getString("target"),
                rs.getString("ir_ref")), optimizerStage, jobId).stream().findFirst();
    }

    private List<TuningTaskView> tasks(long runId) {
        return jdbc.query("""
                SELECT t.id, t.workload_key, t.template, t.strategy, t.status, t.trials, t.trials_budget, t.calls, t.default_cost_us, t.best_cost_us,
                       t.worker, t.attempts, t.note, t.deadline, t.finished_at
                FROM tuning_tasks t JOIN tuning_run_tasks rt ON rt.task_id = t.id
                WHERE rt.run_id = ? ORDER BY t.calls DESC, t.workload_key""", (rs, i) -> {
            Double def = nullableDouble(rs, "default_cost_us");
            Double best = nullableDouble(rs, "best_cost_us");
            return new TuningTaskView(rs.getLong("id"), rs.getString("workload_key"), rs.getString("template"), rs.getString("strategy"),
                    rs.getString("status"), rs.getInt("trials"), rs.getInt("trials_budget"), rs.getInt("calls"), def, best,
                    def != null && best != null && best > 0 ? def / best : null, rs.getString("worker"), rs.getInt("attempts"), rs.getString("note"),
                    instant(rs, "deadline"), instant(rs, "finished_at"));
        }, runId);
    }

    private static TuningRunView summary(ResultSet rs, List<TuningTaskView> tasks) throws SQLException {
        int count = rs.getInt("tasks");
        int ended = rs.getInt("ended");
        String status = rs.getString("status");
        if (status.equals("RUNNING") && ended == count) {
            status = rs.getInt("done") == 0 && rs.getInt("failed") > 0 ? "FAILED" : "DONE";
        }
        long budget = rs.getLong("budget");
        double progress = budget == 0 ? (ended == count ? 1.0 : 0.0) : Math.min(1.0, rs.getLong("progressed") / (double) budget);
        return new TuningRunView(rs.getLong("id"), rs.getObject("job_id", UUID.class), rs.getString("model_name"), rs.getString("target"),
                rs.getString("device_class"), rs.getString("strategy"), rs.getLong("budget_ms"), rs.getInt("trials_per_task"), status,
                rs.getString("created_by"), instant(rs, "created_at"), instant(rs, "updated_at"), count, ended, rs.getLong("trials"), budget, progress,
                tasks);
    }

    private static TuningRunView withTasks(TuningRunView r, List<TuningTaskView> tasks) {
        return new TuningRunView(r.id(), r.jobId(), r.modelName(), r.target(), r.deviceClass(), r.strategy(), r.budgetMs(), r.trialsPerTask(),
                r.status(), r.createdBy(), r.createdAt(), r.updatedAt(), r.taskCount(), r.tasksEnded(), r.trials(), r.trialsBudget(), r.progress(), tasks);
    }
}
