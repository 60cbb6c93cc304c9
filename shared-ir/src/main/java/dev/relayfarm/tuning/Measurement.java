package dev.relayfarm.tuning;

import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.Objects;

/**
 * What measuring one candidate (a task's workload with one config) gave: a cost, or the reason there is none.
 * The farm's hardware agents report the same record the library's runner returns.
 */
public record Measurement(String workloadKey, ScheduleConfig config, Outcome outcome) {
    public Measurement {
        Objects.requireNonNull(workloadKey, "workloadKey");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(outcome, "outcome");
    }

    /** A cost or an error. */
    public sealed interface Outcome permits Cost, Failure {}

    /**
     * The kernel's time per call: the median over {@code repeat} timed repeats of {@code number} calls each, and the
     * spread of those repeats (their coefficient of variation, stddev / mean), in microseconds.
     */
    public record Cost(double medianUs, double cv, int number, int repeat) implements Outcome {}

    /** No cost, and why; {@code detail} is what the compiler, the process or the comparison said. */
    public record Failure(MeasureError error, String detail) implements Outcome {}

    public boolean ok() {
        return outcome instanceof Cost;
    }

    /** The median cost in µs, or +∞ for a failure (so failures sort last and never win). */
    public double costUs() {
        return outcome instanceof Cost c ? c.medianUs() : Double.POSITIVE_INFINITY;
    }
}
