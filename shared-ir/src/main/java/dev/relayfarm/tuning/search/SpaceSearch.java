package dev.relayfarm.tuning.search;

import dev.relayfarm.kernel.template.ConfigSpace;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The bookkeeping every strategy shares, over configuration indices of the task's space: which were proposed,
 * observed or found invalid (never offered again), the history of measurements, a seeded random source, and
 * random picks among what is left. A strategy only says which untried indices come next ({@link #propose}) and
 * what it learns from a measurement ({@link #learn}).
 */
abstract class SpaceSearch implements SearchStrategy {
    /** Random picks try this many draws before scanning for an untried index (the space is then nearly used up). */
    private static final int DRAWS = 64;

    protected final TuningTask task;
    protected final ConfigSpace space;
    protected final SplittableRandom random;
    private final Set<Long> tried = new HashSet<>();
    private final SearchHistory history = new SearchHistory();

    SpaceSearch(TuningTask task, long seed) {
        this.task = task;
        this.space = task.space();
        this.random = new SplittableRandom(seed);
    }

    /**
     * Up to {@code count} distinct untried indices ({@code count} is at most what is left); each must be new, and
     * {@link #markTried} must not have been called for them.
     */
    protected abstract List<Long> propose(int count);

    /** What the strategy learns from one observed measurement of configuration {@code index} ({@code -1}: not of the space). */
    protected void learn(long index, Measurement m) {}

    @Override
    public final List<ScheduleConfig> next(int batch) {
        if (batch < 0) throw new IllegalArgumentException("batch must be >= 0, got " + batch);
        int count = (int) Math.min(batch, left());
        List<ScheduleConfig> out = new ArrayList<>();
        for (long i : propose(count)) {
            if (!tried.add(i)) throw new IllegalStateException(name() + " proposed configuration " + i + " of " + task.key() + " twice");
            out.add(space.get(i));
        }
        return out;
    }

    @Override
    public final void observe(List<Measurement> results) {
        for (Measurement m : results) {
            if (!m.workloadKey().equals(task.key())) {
                throw new IllegalArgumentException("a measurement of " + m.workloadKey() + " given to the search of " + task.key());
            }
            long index;
            try {
                index = space.indexOf(m.config());
            } catch (InvalidConfigException e) {
                index = -1; // a config outside the space (another template of the op): a trial, but nothing to mark
            }
            if (index >= 0) tried.add(index);
            history.add(m);
            learn(index, m);
        }
    }

    @Override
    public final boolean exhausted() {
        return left() == 0;
    }

    @Override
    public final SearchHistory history() {
        return history;
    }

    @Override
    public final TuningTask task() {
        return task;
    }

    /** Configurations neither proposed, observed nor found invalid. */
    protected final long left() {
        return space.size() - tried.size();
    }

    protected final boolean isTried(long index) {
        return tried.contains(index);
    }

    /** Takes {@code index} out of the search without proposing it (it does not lower: the runner could only fail it). */
    protected final void markTried(long index) {
        tried.add(index);
    }

    /**
     * A uniformly random untried index not in {@code excluding} (the batch being built), or -1 when none is left;
     * random draws first, then a scan from a random start (the space is then nearly used up, or tiny).
     */
    protected final long randomUntried(Set<Long> excluding) {
        long size = space.size();
        for (int d = 0; d < DRAWS; d++) {
            long i = random.nextLong(size);
            if (!tried.contains(i) && !excluding.contains(i)) return i;
        }
        long start = random.nextLong(size);
        for (long k = 0; k < size; k++) {
            long i = (start + k) % size;
            if (!tried.contains(i) && !excluding.contains(i)) return i;
        }
        return -1;
    }
}
