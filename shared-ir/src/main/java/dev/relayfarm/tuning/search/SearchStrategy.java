package dev.relayfarm.tuning.search;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import java.util.List;

/**
 * A search over one task's configuration space: proposes batches of configurations not tried before and learns
 * from their measurements. The driver loop:
 * <pre>
 * SearchStrategy s = SearchStrategies.create("xgb", task, seed);
 * while (!s.exhausted() &amp;&amp; !stop.shouldStop(s.history())) s.observe(measurer.measure(task, s.next(64)));
 * </pre>
 * A configuration is proposed at most once, whatever its measurement said (a failure is a trial with cost +∞);
 * measurements of configurations the search did not propose (records of an earlier run, to resume) are welcome
 * and mark those configurations as tried. Seeded: the same seed and the same measurements give the same proposals.
 */
public interface SearchStrategy {
    /** The name the factory knows it by ({@code random}, {@code grid}, {@code ga}, {@code xgb}). */
    String name();

    TuningTask task();

    /**
     * Up to {@code batch} configurations of the task's space never proposed or observed before; fewer (possibly
     * none) only when the space has fewer left.
     */
    List<ScheduleConfig> next(int batch);

    /** Folds measurements of this task's configurations into the search. */
    void observe(List<Measurement> results);

    /** True once every configuration of the space was proposed, observed or found invalid. */
    boolean exhausted();

    SearchHistory history();
}
