package dev.relayfarm.tuning.measure;

import dev.relayfarm.tuning.Measurement;
import java.util.List;
import java.util.Objects;

/**
 * One batch as the runner measured it: the reference (the task's default config, measured on the same device in the
 * same batch, always a cost: a batch whose reference fails is a {@link BaselineFailedException}) and one measurement
 * per candidate, in the order given. Every record of the batch carries {@code baseline}'s cost as its default cost.
 */
public record MeasuredBatch(Measurement baseline, List<Measurement> results) {
    public MeasuredBatch {
        Objects.requireNonNull(baseline, "baseline");
        results = List.copyOf(results);
        if (!baseline.ok()) throw new IllegalArgumentException("a batch's baseline has a cost, got " + baseline.outcome());
    }

    /** The baseline's median in µs. */
    public double baselineUs() {
        return baseline.costUs();
    }
}
