package dev.relayfarm.services.store;

import java.time.Instant;

/** A {@code tuning_tasks} row as a worker needs it. {@code deadline} null: no time budget, only trials. */
public record TaskRow(long id, String workloadKey, String template, String target, String deviceClass, String strategy, String irRef,
                      int trialsBudget, int batch, Instant deadline, int calls, String status, int attempts) {}
