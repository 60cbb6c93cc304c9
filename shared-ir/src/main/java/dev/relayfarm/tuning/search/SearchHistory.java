package dev.relayfarm.tuning.search;

import dev.relayfarm.tuning.Measurement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a search over one task has measured, in the order the results came: the trials, the best so far and the
 * trial that found it (what early stopping and a tuning curve read). Failures count as trials with cost +∞.
 */
public final class SearchHistory {
    private final List<Measurement> trials = new ArrayList<>();
    private Measurement best;
    private int bestTrial = -1;

    void add(Measurement m) {
        trials.add(m);
        if (m.ok() && (best == null || m.costUs() < best.costUs())) {
            best = m;
            bestTrial = trials.size() - 1;
        }
    }

    /** How many measurements were observed. */
    public int trials() {
        return trials.size();
    }

    public List<Measurement> measurements() {
        return List.copyOf(trials);
    }

    /** The fastest successful measurement so far. */
    public Optional<Measurement> best() {
        return Optional.ofNullable(best);
    }

    /** The best cost so far in µs, +∞ while nothing succeeded. */
    public double bestCostUs() {
        return best == null ? Double.POSITIVE_INFINITY : best.costUs();
    }

    /** The 0-based trial that found the current best, -1 while nothing succeeded. */
    public int bestTrial() {
        return bestTrial;
    }

    /** Trials since the best was found (all of them while nothing succeeded). */
    public int trialsSinceImprovement() {
        return trials.size() - 1 - bestTrial;
    }

    /** The best cost after each trial: a tuning curve. */
    public double[] curve() {
        double[] c = new double[trials.size()];
        double b = Double.POSITIVE_INFINITY;
        for (int i = 0; i < c.length; i++) c[i] = b = Math.min(b, trials.get(i).costUs());
        return c;
    }
}
