package dev.relayfarm.passes;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The partial evaluator's simulated heap: for each reference cell it allocated
 * ({@link PartialValue.StaticRef}), the value the cell is known to hold at the current point of the
 * residual program. A cell missing from the store holds something only run time knows; residual
 * code then reads it.
 *
 * <p>Knowledge is dropped conservatively: all of it at a call whose code is not evaluated here (it
 * may write any cell it can reach) and at a write through a reference that is not static (it may be
 * any cell); at the join after residual branches only what every branch left untouched survives.
 */
final class StaticStore {
    private final IdentityHashMap<PartialValue.StaticRef, PartialValue> cells;

    StaticStore() {
        this(new IdentityHashMap<>());
    }

    private StaticStore(IdentityHashMap<PartialValue.StaticRef, PartialValue> cells) {
        this.cells = cells;
    }

    /** What {@code ref} holds, or {@code null} when unknown. */
    PartialValue get(PartialValue.StaticRef ref) {
        return cells.get(ref);
    }

    void put(PartialValue.StaticRef ref, PartialValue value) {
        cells.put(ref, value);
    }

    /** Forgets everything: unknown code ran. */
    void clear() {
        cells.clear();
    }

    StaticStore copy() {
        return new StaticStore(new IdentityHashMap<>(cells));
    }

    /**
     * The store after residual branches that each started from a copy of one store: a cell stays
     * known only when every branch ends with the very same value in it (untouched, or all wrote the
     * same value object).
     */
    static StaticStore join(java.util.List<StaticStore> branches) {
        StaticStore first = branches.get(0);
        IdentityHashMap<PartialValue.StaticRef, PartialValue> out = new IdentityHashMap<>();
        for (Map.Entry<PartialValue.StaticRef, PartialValue> e : first.cells.entrySet()) {
            boolean same = true;
            for (StaticStore other : branches) same &= other.cells.get(e.getKey()) == e.getValue();
            if (same) out.put(e.getKey(), e.getValue());
        }
        return new StaticStore(out);
    }
}
