package dev.relayfarm.services.store;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * What {@link TuningRuns#create} records: one optimized module's workloads, to be tuned for one device class.
 *
 * @param jobId         the job the module comes from, null for a module that has none
 * @param irRef         the optimized module ({@link IrStore} reference): what a worker lowers the workloads from
 * @param target        the target string, canonical ({@code Target#toString})
 * @param strategy      the search: xgb, ga, random or grid (the library's {@code SearchStrategies.NAMES})
 * @param budget        wall-clock time for the run: its tasks' deadline is now plus this
 * @param trialsPerTask measurements each task may make ({@code tuning_tasks.trials_budget})
 * @param createdBy     the caller's token name (the gateway) or the service that asked (e.g. {@code autotuner})
 * @param workloads     {@link TuningRuns#workloads} of the module; one task each
 */
public record NewTuningRun(UUID jobId, String modelName, String irRef, String target, String deviceClass, String strategy, Duration budget,
                           int trialsPerTask, String createdBy, List<RunWorkload> workloads) {
    public NewTuningRun {
        Objects.requireNonNull(modelName, "modelName");
        Objects.requireNonNull(irRef, "irRef");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(deviceClass, "deviceClass");
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(createdBy, "createdBy");
        workloads = List.copyOf(workloads);
        if (budget == null || budget.isNegative() || budget.isZero()) throw new IllegalArgumentException("a tuning run's budget must be positive, got " + budget);
        if (trialsPerTask < 1) throw new IllegalArgumentException("trialsPerTask must be >= 1, got " + trialsPerTask);
    }
}
