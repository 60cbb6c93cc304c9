package dev.relayfarm.services.store;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * A tuning run with its progress (table {@code tuning_runs}); {@code tasks} is empty in lists.
 *
 * @param status   RUNNING, DONE, CANCELLED or FAILED, computed on read: a RUNNING run whose tasks all ended shows DONE
 *                 (FAILED when none of them is DONE and some FAILED) before {@link TuningRuns#refreshStatus} stores it
 * @param progress 0..1: trials made over trials budgeted, a task that ended counting as its whole budget (one that
 *                 exhausted its space early is finished, not 40% done)
 */
public record TuningRunView(long id, UUID jobId, String modelName, String target, String deviceClass, String strategy, long budgetMs,
                            int trialsPerTask, String status, String createdBy, Instant createdAt, Instant updatedAt, int taskCount,
                            int tasksEnded, long trials, long trialsBudget, double progress, List<TuningTaskView> tasks) {
    public TuningRunView {
        tasks = List.copyOf(tasks);
    }

    /** Whether the run has ended: its event stream stops there. */
    public boolean ended() {
        return !status.equals("RUNNING");
    }
}
