package dev.relayfarm.kernel.schedule;

import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.PrimExprs;
import dev.relayfarm.kernel.expr.TensorLoad;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.loop.ForKind;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Replays primitives on the stages, checking each one: an invalid primitive becomes a
 * {@link ScheduleException} naming its position in the schedule, never a crash later in lowering.
 */
final class ScheduleApplier {
    private final List<Stage> stages;

    ScheduleApplier(List<Stage> stages) {
        this.stages = stages;
    }

    void applyAll(Schedule schedule) {
        List<Primitive> ps = schedule.primitives();
        for (int i = 0; i < ps.size(); i++) {
            try {
                apply(ps.get(i));
            } catch (ScheduleException e) {
                throw new ScheduleException("schedule primitive #" + i + " " + ps.get(i) + ": " + e.getMessage());
            }
        }
    }

    private Stage stage(String name) {
        for (Stage s : stages) if (s.name.equals(name)) return s;
        throw new ScheduleException("unknown stage '" + name + "' (stages: " + stages.stream().map(s -> s.name).toList() + ")");
    }

    private static Axis leaf(Stage s, String name) {
        Axis a = s.axes.get(name);
        if (a == null) throw new ScheduleException("stage " + s.name + " has no axis '" + name + "' (leaf axes: " + s.leaves + ")");
        if (!s.leaves.contains(a)) throw new ScheduleException("axis " + name + " of stage " + s.name + " was already split or fused (leaf axes: " + s.leaves + ")");
        return a;
    }

    private static Axis newAxis(Stage s, String name, boolean reduce) {
        if (s.axes.containsKey(name)) throw new ScheduleException("stage " + s.name + " already has an axis named " + name);
        Axis a = new Axis(name, reduce, Var.index(name));
        s.axes.put(name, a);
        return a;
    }

    private void apply(Primitive p) {
        Stage s = stage(p.stage());
        if (s.inline) throw new ScheduleException("stage " + s.name + " is inlined: it has no loops to schedule");
        switch (p) {
            case Primitive.Split sp -> split(s, sp.axis(), sp.factor());
            case Primitive.Reorder r -> reorder(s, r.order());
            case Primitive.Fuse f -> fuse(s, f.outer(), f.inner());
            case Primitive.Tile t -> {
                leaf(s, t.x());
                leaf(s, t.y());
                if (t.x().equals(t.y())) throw new ScheduleException("tile needs two different axes, got " + t.x() + " twice");
                split(s, t.x(), t.xFactor());
                split(s, t.y(), t.yFactor());
                reorder(s, List.of(t.x() + "_o", t.y() + "_o", t.x() + "_i", t.y() + "_i"));
            }
            case Primitive.Vectorize v -> {
                Axis a = leaf(s, v.axis());
                if (a.reduce) throw new ScheduleException("cannot vectorize reduce axis " + a.name + " of stage " + s.name + " (its iterations update one element)");
                if (s.leaves.getLast() != a) throw new ScheduleException("cannot vectorize axis " + a.name + " of stage " + s.name + ": it is not the innermost loop (loop order " + s.leaves + ")");
                annotate(s, a, ForKind.VECTORIZED);
            }
            case Primitive.Unroll u -> annotate(s, leaf(s, u.axis()), ForKind.UNROLLED);
            case Primitive.Parallel par -> {
                Axis a = leaf(s, par.axis());
                if (a.reduce) throw new ScheduleException("cannot parallelize reduce axis " + a.name + " of stage " + s.name + " (threads would race on the accumulator)");
                annotate(s, a, ForKind.PARALLEL);
            }
            case Primitive.ComputeInline ci -> {
                if (s.output) throw new ScheduleException("cannot inline " + s.name + ": it is a kernel output");
                if (s.compute.isReduction()) throw new ScheduleException("cannot inline " + s.name + ": it is a reduction");
                if (stages.stream().anyMatch(o -> o.attachStage == s)) throw new ScheduleException("cannot inline " + s.name + ": other stages are computed at its axes");
                s.inline = true;
            }
            case Primitive.ComputeAt ca -> computeAt(s, ca);
            case Primitive.CacheWrite cw -> cacheWrite(s);
        }
    }

    private static void annotate(Stage s, Axis a, ForKind kind) {
        ForKind old = s.kinds.get(a);
        if (old != null && old != kind) throw new ScheduleException("axis " + a.name + " of stage " + s.name + " is already " + old.name().toLowerCase());
        s.kinds.put(a, kind);
    }

    private static void split(Stage s, String axis, int factor) {
        Axis a = leaf(s, axis);
        if (factor <= 0) throw new ScheduleException("split factor must be positive, got " + factor);
        if (s.kinds.containsKey(a)) throw new ScheduleException("axis " + axis + " of stage " + s.name + " is annotated " + s.kinds.get(a).name().toLowerCase() + "; split it before annotating");
        Axis outer = newAxis(s, axis + "_o", a.reduce), inner = newAxis(s, axis + "_i", a.reduce);
        int at = s.leaves.indexOf(a);
        s.leaves.set(at, outer);
        s.leaves.add(at + 1, inner);
        s.relations.add(new Relation.Split(a, outer, inner, factor));
    }

    private static void reorder(Stage s, List<String> order) {
        List<Axis> axes = new ArrayList<>();
        Set<Axis> seen = new HashSet<>();
        for (String n : order) {
            Axis a = leaf(s, n);
            if (!seen.add(a)) throw new ScheduleException("reorder names axis " + n + " twice");
            axes.add(a);
        }
        List<Integer> positions = new ArrayList<>();
        for (int i = 0; i < s.leaves.size(); i++) if (seen.contains(s.leaves.get(i))) positions.add(i);
        for (int k = 0; k < positions.size(); k++) s.leaves.set(positions.get(k), axes.get(k));
    }

    private static void fuse(Stage s, String outerName, String innerName) {
        Axis outer = leaf(s, outerName), inner = leaf(s, innerName);
        int at = s.leaves.indexOf(outer);
        if (at + 1 >= s.leaves.size() || s.leaves.get(at + 1) != inner) {
            throw new ScheduleException("fuse needs adjacent axes, outer first: " + outerName + " and " + innerName + " in loop order " + s.leaves);
        }
        if (outer.reduce != inner.reduce) throw new ScheduleException("cannot fuse a reduce axis with a data-parallel axis (" + outerName + ", " + innerName + ")");
        if (s.kinds.containsKey(outer) || s.kinds.containsKey(inner)) throw new ScheduleException("fuse before annotating: " + outerName + " or " + innerName + " is annotated");
        Axis fused = newAxis(s, outerName + "_" + innerName + "_f", outer.reduce);
        s.leaves.set(at, fused);
        s.leaves.remove(at + 1);
        s.relations.add(new Relation.Fuse(outer, inner, fused));
    }

    private void computeAt(Stage s, Primitive.ComputeAt ca) {
        if (s.output) throw new ScheduleException("cannot compute output " + s.name + " at another stage: outputs live in their own buffer");
        Stage consumer = stage(ca.consumer());
        if (consumer == s) throw new ScheduleException("cannot compute " + s.name + " at itself");
        if (consumer.inline) throw new ScheduleException("cannot compute " + s.name + " at " + consumer.name + ": it is inlined");
        if (stages.indexOf(consumer) < stages.indexOf(s)) throw new ScheduleException(consumer.name + " does not consume " + s.name);
        Axis a = leaf(consumer, ca.axis());
        s.attachStage = consumer;
        s.attachAxis = a;
    }

    /** Splits stage X into X_local (the original computation) and X (a copy of X_local). */
    private void cacheWrite(Stage s) {
        if (!s.relations.isEmpty() || !s.kinds.isEmpty() || !s.isRoot()) {
            throw new ScheduleException("cache_write must come before other primitives on stage " + s.name);
        }
        String localName = s.name + "_local";
        if (stages.stream().anyMatch(o -> o.name.equals(localName))) throw new ScheduleException("stage " + localName + " already exists");
        Compute c = s.compute;
        List<Integer> shape = c.shape();
        List<String> names = c.axes().stream().map(IterVar::name).toList();
        Map<Var, PrimExpr> rename = new HashMap<>();
        Compute local = Te.compute(localName, shape, names, vars -> {
            for (int d = 0; d < vars.size(); d++) rename.put(c.axes().get(d).var(), vars.get(d));
            return PrimExprs.substitute(c.body(), rename);
        });
        Compute copy = new Compute(c.name(), c.axes(), new TensorLoad(local, c.axes().stream().map(iv -> (PrimExpr) iv.var()).toList()), c.id());
        s.setCompute(copy);
        stages.add(stages.indexOf(s), new Stage(local, false));
    }
}
