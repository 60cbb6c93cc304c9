package dev.relayfarm.services.store;

/**
 * One workload a tuning run needs tuned: a tuning task of the run's module ({@code TuningTask#key},
 * {@code TuningTask#template}) and how often one model run calls its kernels ({@code Tuner.callsPerWorkload}), the
 * weight a worker gives it.
 */
public record RunWorkload(String workloadKey, String template, int calls) {
    public RunWorkload {
        if (workloadKey == null || workloadKey.isBlank()) throw new IllegalArgumentException("a workload needs its key");
        if (template == null || template.isBlank()) throw new IllegalArgumentException("workload " + workloadKey + " needs its template");
        if (calls < 1) throw new IllegalArgumentException("workload " + workloadKey + ": calls must be >= 1, got " + calls);
    }
}
