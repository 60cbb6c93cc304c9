package dev.relayfarm.tuning.scheduler;

import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Which of a model's tasks gets the next round of trials (Ansor's gradient task scheduler, simplified): the model's
 * time is Σ calls × best cost over its workloads, and the next round goes where it is expected to shrink most.
 * Every task first gets one round, in the model's kernel order (its default is measured in that round, so every later
 * estimate has a baseline). After that a task's expected gain per round is its weight times a blend of
 * <ul>
 *   <li>what its last rounds actually gained (backward: µs saved per round over the last {@link #WINDOW} rounds), and</li>
 *   <li>an optimistic guess that shrinks as the task gets more rounds (forward: a fraction of its best cost divided by
 *       its rounds), so a task that has not improved lately still gets another look now and then.</li>
 * </ul>
 * A task whose space is exhausted, or which its strategy stopped early, is {@link #finish finished} and gets no more.
 *
 * <p>A task's default cost is the median of every measurement of its default so far (each round measures it again as
 * its baseline), not the latest one: one measurement moves by a few percent from batch to batch, and a model speedup
 * against the latest default would move with it. For the same reason a measurement of the default is never the task's
 * best: its best is the cheapest other config, or the default's median when none beat that.
 */
public final class TaskScheduler {
    /** Weight of the backward (observed) gain against the forward (optimistic) one; Ansor's alpha. */
    static final double ALPHA = 0.2;
    /** Share of a task's best cost the forward estimate expects its next round to save, before dividing by its rounds. */
    static final double OPTIMISM = 0.1;
    /** Rounds the backward gain is averaged over. */
    static final int WINDOW = 3;

    private final Map<String, State> states = new LinkedHashMap<>();

    private static final class State {
        final TuningTask task;
        final int calls;
        final List<Double> bestAfterRound = new ArrayList<>();
        final List<Double> defaultSamples = new ArrayList<>();
        double defaultUs = Double.POSITIVE_INFINITY;
        double bestCandidateUs = Double.POSITIVE_INFINITY;
        int trials;
        boolean finished;

        State(TuningTask task, int calls) {
            this.task = task;
            this.calls = calls;
        }

        int rounds() {
            return bestAfterRound.size();
        }

        double bestUs() {
            return Math.min(bestCandidateUs, defaultUs);
        }

        double expectedGainUs() {
            double bestUs = bestUs();
            if (!Double.isFinite(bestUs)) return 0;
            int r = rounds();
            int k = Math.min(WINDOW, r - 1);
            // the best rises only when the default's median does (no config beat it): no gain, not a negative one
            double backward = k > 0 ? Math.max(0, bestAfterRound.get(r - 1 - k) - bestUs) / k : 0;
            double forward = OPTIMISM * bestUs / r;
            return calls * (ALPHA * backward + (1 - ALPHA) * forward);
        }
    }

    /**
     * @param calls how many times the model calls each workload's kernels per run (kernels sharing a key add up);
     *     a task missing from it counts once
     */
    public TaskScheduler(List<TuningTask> tasks, Map<String, Integer> calls) {
        for (TuningTask t : tasks) states.put(t.key(), new State(t, Math.max(1, calls.getOrDefault(t.key(), 1))));
    }

    /** The task the next round goes to; empty when every task is finished. */
    public Optional<TuningTask> next() {
        // first, one round each: unmeasured tasks have no estimate yet (declaration order is the model's kernel order)
        for (State s : states.values()) if (!s.finished && s.rounds() == 0) return Optional.of(s.task);
        State best = null;
        for (State s : states.values()) {
            if (s.finished) continue;
            if (best == null || s.expectedGainUs() > best.expectedGainUs()) best = s;
        }
        return Optional.ofNullable(best).map(s -> s.task);
    }

    /**
     * A round of {@code task} was measured. {@code defaultUs} is its template default's cost measured in the same batch
     * (the runner measures the default with every batch) or NaN when that batch did not include it. Measurements of the
     * default config in {@code round} (resumed records hold each batch's baseline) count as default measurements too.
     */
    public void recordRound(TuningTask task, List<Measurement> round, double defaultUs) {
        State s = state(task);
        if (!Double.isNaN(defaultUs)) s.defaultSamples.add(defaultUs);
        for (Measurement m : round) {
            if (!m.config().equals(task.defaultConfig())) s.bestCandidateUs = Math.min(s.bestCandidateUs, m.costUs());
            else if (m.ok()) s.defaultSamples.add(m.costUs());
        }
        if (!s.defaultSamples.isEmpty()) s.defaultUs = median(s.defaultSamples);
        s.trials += round.size();
        s.bestAfterRound.add(s.bestUs());
    }

    /** The median of {@code values} (not empty): the mean of the middle two for an even count. */
    static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int h = v.length / 2;
        return v.length % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
    }

    /** No more rounds for {@code task}: its space is exhausted or its strategy stopped early. */
    public void finish(TuningTask task) {
        state(task).finished = true;
    }

    public boolean finished(TuningTask task) {
        return state(task).finished;
    }

    /** The model's estimated time per run from the best costs found so far (Σ calls × best), in µs; +∞ until every task was measured. */
    public double modelUs() {
        return states.values().stream().mapToDouble(s -> s.calls * s.bestUs()).sum();
    }

    /** The same with every task at its template default (the median of its measurements): the untuned model's estimate. */
    public double defaultModelUs() {
        return states.values().stream().mapToDouble(s -> s.calls * s.defaultUs).sum();
    }

    /** Where a task stands: its calls, trials, default and best cost. */
    public record Progress(TuningTask task, int calls, int trials, double defaultUs, double bestUs) {
        public double speedup() {
            return defaultUs / bestUs;
        }
    }

    public List<Progress> progress() {
        return states.values().stream().map(s -> new Progress(s.task, s.calls, s.trials, s.defaultUs, s.bestUs())).toList();
    }

    private State state(TuningTask task) {
        return Objects.requireNonNull(states.get(task.key()), () -> "not a task of this scheduler: " + task.key());
    }
}
