package dev.relayfarm.services.store;

import java.time.Instant;

/**
 * One task of a tuning run as the run's view shows it (table {@code tuning_tasks}).
 *
 * @param workload    the workload key
 * @param status      PENDING, RUNNING, DONE, FAILED or CANCELLED
 * @param trials      measurements made so far (a task shared by several runs counts all of its own)
 * @param speedup     {@code defaultCostUs / bestCostUs}, null while either is unknown
 * @param worker      the worker on it (the last one)
 * @param note        why it ended: space exhausted, budget, cancelled, an error
 */
public record TuningTaskView(long id, String workload, String template, String strategy, String status, int trials, int trialsBudget, int calls,
                             Double defaultCostUs, Double bestCostUs, Double speedup, String worker, int attempts, String note, Instant deadline,
                             Instant finishedAt) {
}
