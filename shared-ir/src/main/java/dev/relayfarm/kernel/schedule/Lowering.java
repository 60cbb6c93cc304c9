package dev.relayfarm.kernel.schedule;

import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.Interval;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.Load;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.PrimExprs;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.Simplifier;
import dev.relayfarm.kernel.expr.TensorLoad;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.loop.Allocate;
import dev.relayfarm.kernel.loop.For;
import dev.relayfarm.kernel.loop.ForKind;
import dev.relayfarm.kernel.loop.IfThenElse;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.Scope;
import dev.relayfarm.kernel.loop.Seq;
import dev.relayfarm.kernel.loop.Stmt;
import dev.relayfarm.kernel.loop.Store;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Lowers a kernel definition plus a schedule to a loop nest with buffers.
 *
 * <p>Steps: (1) one stage per compute reachable from the outputs, producers first; (2) the schedule's
 * primitives replayed in order on the stages ({@link ScheduleApplier}); (3) bound inference, consumers
 * first: a stage computed at a consumer's axis gets the region that one iteration of that axis reads
 * (index expressions must be affine and non-decreasing in the inner loop variables), its root extents
 * become that region's and its buffer a local tile; (4) loop nests: each root stage in order, attached
 * stages injected at their axis, reductions as an init nest before the outermost reduce loop and an
 * update nest; splits that do not divide and regions that may leave the tensor get guards.
 *
 * <p>Not done here: storage reuse between stages, cache_read, packed layouts, dynamic shapes.
 */
public final class Lowering {
    private final KernelDef def;
    private final List<Stage> stages = new ArrayList<>();
    private final Map<Long, Stage> stageOf = new HashMap<>();
    private final Map<Long, Buffer> params = new LinkedHashMap<>();
    private final Map<Stage, Buffer> buffers = new HashMap<>();
    private final Map<Var, Interval> ranges = new HashMap<>();
    private final Map<Stage, StageLayout> layouts = new HashMap<>();

    /** Per-stage results of bound inference. */
    private record StageLayout(Map<Axis, Integer> extents, Map<Var, PrimExpr> rootValues, List<PrimExpr> localIndex,
                               List<PrimExpr> regionMin, List<PrimExpr> dataGuards, List<PrimExpr> reduceGuards) {}

    private Lowering(KernelDef def) {
        this.def = def;
    }

    public static LoweredFunc lower(KernelDef def, Schedule schedule) {
        Lowering l = new Lowering(def);
        l.buildStages();
        new ScheduleApplier(l.stages).applyAll(schedule);
        return l.emit();
    }

    private void buildStages() {
        Set<Long> outputs = new HashSet<>();
        for (Compute c : def.outputs()) outputs.add(c.id());
        Set<Long> inputs = new HashSet<>();
        for (Placeholder p : def.inputs()) {
            inputs.add(p.id());
            params.put(p.id(), Buffer.of(p.name(), p.shape(), p.dtype()));
        }
        List<Compute> order = new ArrayList<>();
        Set<Long> visited = new HashSet<>();
        for (Compute c : def.outputs()) topo(c, visited, order, inputs);
        Set<String> names = new HashSet<>();
        for (Placeholder p : def.inputs()) names.add(p.name());
        for (Compute c : order) {
            if (!names.add(c.name())) throw new IllegalArgumentException("kernel " + def.name() + ": two tensors named " + c.name());
            Stage s = new Stage(c, outputs.contains(c.id()));
            stages.add(s);
            stageOf.put(c.id(), s);
        }
        for (Compute c : def.outputs()) params.put(c.id(), Buffer.of(c.name(), c.shape(), c.dtype()));
    }

    private void topo(Compute c, Set<Long> visited, List<Compute> order, Set<Long> inputs) {
        if (!visited.add(c.id())) return;
        for (Tensor t : c.inputs()) {
            switch (t) {
                case Compute d -> topo(d, visited, order, inputs);
                case Placeholder p -> {
                    if (!inputs.contains(p.id())) {
                        throw new IllegalArgumentException("kernel " + def.name() + ": compute " + c.name() + " reads " + p.name() + ", which is not a kernel input");
                    }
                }
            }
        }
        order.add(c);
    }

    // ---- bound inference ----------------------------------------------------------------------

    private LoweredFunc emit() {
        stageOf.clear();
        for (Stage s : stages) stageOf.put(s.compute.id(), s);
        for (Stage s : stages) checkVectorize(s);
        for (int i = stages.size() - 1; i >= 0; i--) {
            Stage s = stages.get(i);
            if (!s.inline) layouts.put(s, layout(s));
        }
        for (Stage s : stages) {
            if (s.inline) continue;
            if (s.output) buffers.put(s, params.get(s.compute.id()));
            else if (s.isRoot()) buffers.put(s, Buffer.of(s.name, s.compute.shape(), s.compute.dtype()));
            else {
                List<Integer> tile = new ArrayList<>();
                for (int d = 0; d < s.compute.axes().size(); d++) tile.add(layouts.get(s).extents().get(s.roots.get(d)));
                buffers.put(s, Buffer.of(s.name, tile, s.compute.dtype()));
            }
        }
        List<Stmt> body = new ArrayList<>();
        for (Stage s : stages) if (!s.inline && s.isRoot()) body.add(nest(s));
        Stmt result = Seq.of(body);
        for (int i = stages.size() - 1; i >= 0; i--) {
            Stage s = stages.get(i);
            if (!s.inline && s.isRoot() && !s.output) result = new Allocate(buffers.get(s), Scope.GLOBAL, result);
        }
        List<Buffer> ps = new ArrayList<>(params.values());
        return new LoweredFunc(def.name(), ps, def.inputs().size(), result);
    }

    private void checkVectorize(Stage s) {
        if (s.inline) return;
        for (Map.Entry<Axis, ForKind> e : s.kinds.entrySet()) {
            if (e.getValue() == ForKind.VECTORIZED && s.leaves.getLast() != e.getKey()) {
                throw new ScheduleException("stage " + s.name + ": vectorized axis " + e.getKey().name + " is not the innermost loop (loop order "
                        + s.leaves + ")");
            }
        }
    }

    private StageLayout layout(Stage s) {
        List<Integer> rootExtents = new ArrayList<>(s.fullRootExtents());
        List<PrimExpr> regionMin = new ArrayList<>();
        int nData = s.compute.axes().size();
        for (int d = 0; d < nData; d++) regionMin.add(new IntImm(0, dev.relayfarm.ir.DType.INT64));
        List<PrimExpr> dataGuards = new ArrayList<>(), reduceGuards = new ArrayList<>();
        boolean[] mayLeave = new boolean[nData];
        if (!s.isRoot()) inferRegion(s, rootExtents, regionMin, mayLeave);
        Map<Axis, Integer> extents = new HashMap<>();
        for (int r = 0; r < s.roots.size(); r++) extents.put(s.roots.get(r), rootExtents.get(r));
        Set<Axis> nonDividing = new HashSet<>();
        for (Relation rel : s.relations) {
            switch (rel) {
                case Relation.Split sp -> {
                    int p = extents.get(sp.parent());
                    int inner = Math.min(sp.factor(), p);
                    extents.put(sp.inner(), inner);
                    extents.put(sp.outer(), (p + inner - 1) / inner);
                    if (p % inner != 0) nonDividing.add(sp.parent());
                }
                case Relation.Fuse f -> extents.put(f.fused(), extents.get(f.outer()) * extents.get(f.inner()));
            }
        }
        for (Axis leaf : s.leaves) ranges.put(leaf.var, Interval.range(extents.get(leaf)));
        Map<Axis, PrimExpr> value = new HashMap<>();
        for (Axis leaf : s.leaves) value.put(leaf, leaf.var);
        for (int i = s.relations.size() - 1; i >= 0; i--) {
            switch (s.relations.get(i)) {
                case Relation.Split sp -> {
                    PrimExpr v = value.get(sp.outer()).mul(extents.get(sp.inner())).add(value.get(sp.inner()));
                    value.put(sp.parent(), simplify(v));
                    if (nonDividing.contains(sp.parent())) {
                        PrimExpr guard = simplify(value.get(sp.parent()).lt(extents.get(sp.parent())));
                        (sp.parent().reduce ? reduceGuards : dataGuards).add(guard);
                    }
                }
                case Relation.Fuse f -> {
                    int innerExtent = extents.get(f.inner());
                    value.put(f.outer(), simplify(value.get(f.fused()).div(innerExtent)));
                    value.put(f.inner(), simplify(value.get(f.fused()).mod(innerExtent)));
                }
            }
        }
        Map<Var, PrimExpr> rootValues = new HashMap<>();
        List<PrimExpr> localIndex = new ArrayList<>();
        for (int r = 0; r < s.roots.size(); r++) {
            Axis root = s.roots.get(r);
            PrimExpr local = value.get(root);
            if (r < nData) {
                localIndex.add(local);
                PrimExpr abs = simplify(regionMin.get(r).add(local));
                rootValues.put(s.rootIterVar(r).var(), abs);
                if (mayLeave[r]) dataGuards.add(abs.ge(0).and(abs.lt(s.rootIterVar(r).extent())));
            } else {
                rootValues.put(s.rootIterVar(r).var(), local);
            }
        }
        return new StageLayout(extents, rootValues, localIndex, regionMin, dataGuards, reduceGuards);
    }

    /**
     * The region of {@code producer} that one iteration of its attach axis needs: for each data
     * dimension, the smallest index read (an expression of the consumer's outer loop variables) and a
     * constant extent. Fills {@code rootExtents}, {@code regionMin} and guards for regions that may
     * stick out of the tensor (a tile at the ragged edge of a non-dividing split).
     */
    private void inferRegion(Stage producer, List<Integer> rootExtents, List<PrimExpr> regionMin, boolean[] mayLeave) {
        Stage consumer = producer.attachStage;
        StageLayout cl = layouts.get(consumer);
        if (cl == null) throw new ScheduleException("stage " + producer.name + " is computed at " + consumer.name + ", which is inlined or not lowered first");
        int at = consumer.leaves.indexOf(producer.attachAxis);
        Map<Var, Integer> relax = new LinkedHashMap<>();
        for (int i = at + 1; i < consumer.leaves.size(); i++) {
            Axis a = consumer.leaves.get(i);
            relax.put(a.var, cl.extents().get(a));
        }
        List<List<PrimExpr>> accesses = new ArrayList<>();
        PrimExpr body = expandInline(consumer.compute.body());
        PrimExprs.forEach(body, e -> {
            if (e instanceof TensorLoad tl && tl.tensor().id() == producer.compute.id()) {
                List<PrimExpr> idx = new ArrayList<>();
                for (PrimExpr x : tl.indices()) idx.add(simplify(PrimExprs.substitute(x, cl.rootValues())));
                accesses.add(idx);
            }
        });
        if (accesses.isEmpty()) throw new ScheduleException("compute_at: stage " + consumer.name + " does not read " + producer.name);
        int nData = producer.compute.axes().size();
        for (int d = 0; d < nData; d++) {
            PrimExpr lo = null, hi = null;
            for (List<PrimExpr> idx : accesses) {
                PrimExpr e = idx.get(d);
                for (Map.Entry<Var, Integer> v : relax.entrySet()) {
                    PrimExpr step = simplify(PrimExprs.substitute(e, Map.of(v.getKey(), v.getKey().add(1))).sub(e));
                    if (!(step instanceof IntImm k) || k.value() < 0) {
                        throw new ScheduleException("compute_at: cannot infer the region of " + producer.name + " read by " + consumer.name + " at axis "
                                + producer.attachAxis.name + ": index " + dev.relayfarm.kernel.expr.ExprPrinter.print(e) + " is not affine and non-decreasing in " + v.getKey().name());
                    }
                }
                Map<Var, PrimExpr> low = new HashMap<>(), high = new HashMap<>();
                relax.forEach((v, ext) -> {
                    low.put(v, new IntImm(0, v.dtype()));
                    high.put(v, new IntImm(ext - 1, v.dtype()));
                });
                PrimExpr l = simplify(PrimExprs.substitute(e, low)), h = simplify(PrimExprs.substitute(e, high));
                lo = lo == null ? l : pick(lo, l, true, producer);
                hi = hi == null ? h : pick(hi, h, false, producer);
            }
            PrimExpr extentExpr = simplify(hi.sub(lo).add(1));
            if (!(extentExpr instanceof IntImm ext)) {
                throw new ScheduleException("compute_at: the region of " + producer.name + " read by " + consumer.name + " at axis " + producer.attachAxis.name
                        + " has no constant extent in dimension " + d + " (" + dev.relayfarm.kernel.expr.ExprPrinter.print(extentExpr) + ")");
            }
            int full = rootExtents.get(d);
            int extent = (int) Math.min(ext.value(), full);
            rootExtents.set(d, extent);
            regionMin.set(d, lo);
            Interval loRange = dev.relayfarm.kernel.expr.Bounds.of(lo, ranges);
            mayLeave[d] = loRange.min() < 0 || loRange.max() > (long) full - extent;
        }
    }

    /** The smaller (or larger) of two bounds that differ by a constant. */
    private PrimExpr pick(PrimExpr a, PrimExpr b, boolean min, Stage producer) {
        PrimExpr diff = simplify(a.sub(b));
        if (!(diff instanceof IntImm k)) {
            throw new ScheduleException("compute_at: reads of " + producer.name + " at " + dev.relayfarm.kernel.expr.ExprPrinter.print(a) + " and "
                    + dev.relayfarm.kernel.expr.ExprPrinter.print(b) + " are not a constant distance apart");
        }
        return (k.value() <= 0) == min ? a : b;
    }

    // ---- expression resolution -----------------------------------------------------------------

    /** Replaces reads of inlined stages by their element formula, recursively. */
    private PrimExpr expandInline(PrimExpr e) {
        return PrimExprs.map(e, x -> {
            if (x instanceof TensorLoad tl && stageOf.get(tl.tensor().id()) instanceof Stage s && s.inline) {
                Map<Var, PrimExpr> sub = new HashMap<>();
                for (int d = 0; d < s.compute.axes().size(); d++) sub.put(s.compute.axes().get(d).var(), tl.indices().get(d));
                return expandInline(PrimExprs.substitute(s.compute.body(), sub));
            }
            return x;
        });
    }

    /** Turns every tensor read into a load of the tensor's buffer (tile-relative for attached stages). */
    private PrimExpr resolve(PrimExpr e) {
        return PrimExprs.map(expandInline(e), x -> {
            if (!(x instanceof TensorLoad tl)) return x;
            Buffer param = params.get(tl.tensor().id());
            Stage s = stageOf.get(tl.tensor().id());
            if (s != null && !s.output) {
                List<PrimExpr> idx = new ArrayList<>();
                List<PrimExpr> mins = layouts.get(s).regionMin();
                for (int d = 0; d < tl.indices().size(); d++) idx.add(tl.indices().get(d).sub(mins.get(d)));
                return new Load(buffers.get(s), idx);
            }
            if (param == null) throw new IllegalStateException("no buffer for tensor " + tl.tensor().name());
            return new Load(param, tl.indices());
        });
    }

    private PrimExpr simplify(PrimExpr e) {
        return Simplifier.simplify(e, ranges);
    }

    // ---- loop nests ----------------------------------------------------------------------------

    private Stmt nest(Stage s) {
        StageLayout l = layouts.get(s);
        Buffer out = buffers.get(s);
        List<PrimExpr> storeIdx = l.localIndex().stream().map(this::simplify).toList();
        if (!(s.compute.body() instanceof Reduce r)) {
            PrimExpr value = simplify(PrimExprs.substitute(resolve(s.compute.body()), l.rootValues()));
            Stmt store = guard(new Store(out, storeIdx, value), l.dataGuards());
            return loops(s, 0, s.leaves.size(), store, true);
        }
        PrimExpr source = simplify(PrimExprs.substitute(resolve(r.source()), l.rootValues()));
        Stmt init = guard(new Store(out, storeIdx, simplify(resolve(r.init()))), l.dataGuards());
        List<PrimExpr> all = new ArrayList<>(l.dataGuards());
        all.addAll(l.reduceGuards());
        Stmt update = guard(new Store(out, storeIdx, r.combiner().combine(new Load(out, storeIdx), source)), all);
        int firstReduce = 0;
        while (!s.leaves.get(firstReduce).reduce) firstReduce++;
        // The init runs over the data axes nested inside the first reduce loop, before that loop.
        Stmt initNest = init;
        for (int i = s.leaves.size() - 1; i >= firstReduce; i--) {
            Axis a = s.leaves.get(i);
            if (!a.reduce) initNest = loop(s, a, initNest);
        }
        Stmt updateNest = loops(s, firstReduce, s.leaves.size(), update, true);
        return loops(s, 0, firstReduce, Seq.of(List.of(initNest, updateNest)), true);
    }

    private Stmt guard(Stmt body, List<PrimExpr> conditions) {
        PrimExpr cond = null;
        for (PrimExpr c : conditions) {
            PrimExpr sc = simplify(c);
            if (sc instanceof IntImm i && i.value() != 0) continue;
            cond = cond == null ? sc : cond.and(sc);
        }
        return cond == null ? body : IfThenElse.of(cond, body);
    }

    /** Loops over leaves {@code [from, to)} around {@code inner}, with attached stages injected. */
    private Stmt loops(Stage s, int from, int to, Stmt inner, boolean inject) {
        Stmt body = inner;
        for (int i = to - 1; i >= from; i--) {
            Axis a = s.leaves.get(i);
            if (inject) body = withAttached(s, a, body);
            body = loop(s, a, body);
        }
        return body;
    }

    private Stmt loop(Stage s, Axis a, Stmt body) {
        int extent = layouts.get(s).extents().get(a);
        return new For(a.var, new IntImm(0, a.var.dtype()), new IntImm(extent, a.var.dtype()), s.kinds.getOrDefault(a, ForKind.SERIAL), body);
    }

    private Stmt withAttached(Stage consumer, Axis axis, Stmt rest) {
        List<Stage> attached = new ArrayList<>();
        for (Stage p : stages) if (!p.inline && p.attachStage == consumer && p.attachAxis == axis) attached.add(p);
        if (attached.isEmpty()) return rest;
        List<Stmt> parts = new ArrayList<>();
        for (Stage p : attached) parts.add(nest(p));
        parts.add(rest);
        Stmt result = Seq.of(parts);
        for (int i = attached.size() - 1; i >= 0; i--) result = new Allocate(buffers.get(attached.get(i)), Scope.LOCAL, result);
        return result;
    }
}
