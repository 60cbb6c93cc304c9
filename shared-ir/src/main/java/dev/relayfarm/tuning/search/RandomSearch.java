package dev.relayfarm.tuning.search;

import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Uniformly random untried configurations: the baseline every other strategy must beat. */
public final class RandomSearch extends SpaceSearch {
    public static final String NAME = "random";

    public RandomSearch(TuningTask task, long seed) {
        super(task, seed);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    protected List<Long> propose(int count) {
        Set<Long> batch = new HashSet<>();
        List<Long> out = new ArrayList<>();
        while (out.size() < count) {
            long i = randomUntried(batch);
            if (i < 0) break;
            batch.add(i);
            out.add(i);
        }
        return out;
    }
}
