package dev.relayfarm.tuning.measure;

import dev.relayfarm.tuning.Measurement;

/**
 * The reference of a batch (the task's default config) did not measure: with no reference output there is nothing
 * to check candidates against, and with no baseline cost nothing to compare their costs with, so the whole batch is
 * refused rather than recorded. Usually the machine's fault (no memory, a timeout too short for this workload) or a
 * compiler bug in the default schedule, never the candidates'.
 */
public final class BaselineFailedException extends RuntimeException {
    private final transient Measurement baseline;

    public BaselineFailedException(Measurement baseline) {
        super("the default config of workload " + baseline.workloadKey() + " failed to measure, so no candidate of the batch can be checked or compared: "
                + baseline.outcome());
        this.baseline = baseline;
    }

    /** The failed measurement of the default config. */
    public Measurement baseline() {
        return baseline;
    }
}
