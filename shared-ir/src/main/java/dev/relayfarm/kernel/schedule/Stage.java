package dev.relayfarm.kernel.schedule;

import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.loop.ForKind;
import dev.relayfarm.kernel.te.Compute;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The schedule state of one compute while primitives are replayed (private to lowering: the
 * public, immutable form of a schedule is the primitive list).
 */
final class Stage {
    final String name;
    final boolean output;
    Compute compute;
    final List<Axis> roots = new ArrayList<>();
    final List<Axis> leaves = new ArrayList<>();
    final Map<String, Axis> axes = new LinkedHashMap<>();
    final List<Relation> relations = new ArrayList<>();
    final Map<Axis, ForKind> kinds = new HashMap<>();
    boolean inline;
    Stage attachStage;
    Axis attachAxis;

    Stage(Compute compute, boolean output) {
        this.name = compute.name();
        this.output = output;
        setCompute(compute);
    }

    /** (Re)builds the root axes from the compute: one per data axis, then one per reduce axis. */
    void setCompute(Compute c) {
        compute = c;
        roots.clear();
        leaves.clear();
        axes.clear();
        for (IterVar iv : c.axes()) addRoot(iv, false);
        for (IterVar iv : c.reduceAxes()) addRoot(iv, true);
    }

    private void addRoot(IterVar iv, boolean reduce) {
        if (axes.containsKey(iv.name())) {
            throw new IllegalArgumentException("compute " + name + ": two axes named " + iv.name() + " (axis names must be unique in a stage)");
        }
        Axis a = new Axis(iv.name(), reduce, iv.var());
        roots.add(a);
        leaves.add(a);
        axes.put(a.name, a);
    }

    boolean isRoot() {
        return attachStage == null;
    }

    /** Extent of each root axis of the full compute (data axes, then reduce axes). */
    List<Integer> fullRootExtents() {
        List<Integer> out = new ArrayList<>();
        for (IterVar iv : compute.axes()) out.add(iv.extent());
        for (IterVar iv : compute.reduceAxes()) out.add(iv.extent());
        return out;
    }

    IterVar rootIterVar(int i) {
        int n = compute.axes().size();
        return i < n ? compute.axes().get(i) : compute.reduceAxes().get(i - n);
    }
}
