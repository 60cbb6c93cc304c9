package dev.relayfarm.tuning.search;

import dev.relayfarm.tuning.TuningTask;
import java.util.ArrayList;
import java.util.List;

/**
 * Every configuration in index order (the first knob varying slowest), skipping those already tried: exhaustive
 * for the small spaces of the injective and reduction templates, a fixed sweep elsewhere.
 */
public final class GridSearch extends SpaceSearch {
    public static final String NAME = "grid";
    private long cursor;

    public GridSearch(TuningTask task, long seed) {
        super(task, seed);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    protected List<Long> propose(int count) {
        List<Long> out = new ArrayList<>();
        for (; out.size() < count && cursor < space.size(); cursor++) if (!isTried(cursor)) out.add(cursor);
        return out;
    }
}
