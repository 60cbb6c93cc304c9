package dev.relayfarm.tuning.search;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BitCast;
import dev.relayfarm.kernel.expr.Bounds;
import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.Call;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.Interval;
import dev.relayfarm.kernel.expr.Load;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.TensorLoad;
import dev.relayfarm.kernel.expr.Unary;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.loop.Allocate;
import dev.relayfarm.kernel.loop.Evaluate;
import dev.relayfarm.kernel.loop.For;
import dev.relayfarm.kernel.loop.ForKind;
import dev.relayfarm.kernel.loop.IfThenElse;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.Scope;
import dev.relayfarm.kernel.loop.Seq;
import dev.relayfarm.kernel.loop.Stmt;
import dev.relayfarm.kernel.loop.Store;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A fixed-length feature vector of a lowered kernel's loop nest, in the spirit of Ansor's per-store features: for
 * each store, the loops around it (trip counts, extents and kinds: parallel, vectorized, unrolled), the arithmetic it
 * does, the bytes its global-memory accesses touch when the innermost 1, 2, 3, 4, 6 loops run (the working set
 * each cache level has to hold), the arithmetic intensity and reuse that follow, and the stride of the innermost
 * loop through each access. The two heaviest stores (by trip count × operations: usually the reduction update and
 * the epilogue's write-back) fill two slots, padded with zeros; kernel-wide aggregates come first.
 *
 * <p>Nothing here names a knob or a template, so a model trained on one workload's features ranks another's: a
 * register tile is "a LOCAL allocation of 96 floats, an unrolled loop of 12 around a vectorized loop of 8", whatever
 * the template called its knobs. Counts and sizes are {@code log2(1 + x)} so that the magnitudes of a 7×7 and a
 * 224×224 convolution stay comparable; small counts (loops unrolled, accesses by stride) are plain.
 *
 * <p>Not modelled: cache associativity, the C compiler's own transformations, branch costs of padding selects.
 */
public final class LoopNestFeatures {
    /** The loop levels (counted from the innermost loop around a store) whose working set is a feature. */
    private static final int[] LEVELS = {1, 2, 3, 4, 6};
    /** How many stores get a slot of their own. */
    private static final int STORE_SLOTS = 2;

    private static final List<String> KERNEL_NAMES = List.of(
            "stores", "total_flops", "global_buffer_bytes", "local_alloc_bytes", "max_local_alloc_elements",
            "outer_parallel_extent", "parallel_loops", "loops", "max_depth");
    private static final List<String> STORE_NAMES = storeNames();

    /** Feature names, in vector order ({@code s0.*} is the heaviest store, {@code s1.*} the next). */
    public static final List<String> NAMES = allNames();

    private LoopNestFeatures() {}

    /** The number of features, the same for every kernel. */
    public static int length() {
        return NAMES.size();
    }

    /** The position of feature {@code name} in the vector. */
    public static int index(String name) {
        int i = NAMES.indexOf(name);
        if (i < 0) throw new IllegalArgumentException("no loop-nest feature " + name + " (features: " + NAMES + ")");
        return i;
    }

    /** The features of {@code func}'s loop nest, all finite. */
    public static float[] of(LoweredFunc func) {
        Walk w = new Walk();
        for (Buffer b : func.params()) w.global.add(b.id());
        w.stmt(func.body(), new ArrayList<>());
        float[] v = new float[length()];
        int i = 0;
        v[i++] = log(w.stores.size());
        v[i++] = log(w.stores.stream().mapToDouble(s -> s.flopsPerRun * s.trips).sum());
        v[i++] = log(w.globalBytes.values().stream().mapToDouble(Double::doubleValue).sum());
        v[i++] = log(w.localBytes);
        v[i++] = log(w.maxLocalElements);
        v[i++] = log(w.outerParallelExtent);
        v[i++] = log(w.parallelLoops);
        v[i++] = log(w.loops);
        v[i++] = log(w.maxDepth);
        List<StoreStats> heaviest = new ArrayList<>(w.stores);
        heaviest.sort(Comparator.comparingDouble((StoreStats s) -> -s.trips * (s.flopsPerRun + s.accesses + 1)));
        for (int slot = 0; slot < STORE_SLOTS; slot++) {
            float[] s = slot < heaviest.size() ? heaviest.get(slot).vector() : new float[STORE_NAMES.size()];
            System.arraycopy(s, 0, v, i, s.length);
            i += s.length;
        }
        for (int k = 0; k < v.length; k++) {
            if (!Float.isFinite(v[k])) throw new IllegalStateException("feature " + NAMES.get(k) + " of " + func.name() + " is " + v[k]);
        }
        return v;
    }

    private static List<String> storeNames() {
        List<String> n = new ArrayList<>(List.of("trips", "flops", "int_ops", "depth", "innermost_extent", "vector_width", "vector_position",
                "unroll_product", "unrolled_loops", "parallel_product", "work_per_thread", "loads", "local_store",
                "stride0_accesses", "stride1_accesses", "strided_accesses"));
        for (int l : LEVELS) n.add("bytes_l" + l);
        n.add("bytes_all");
        n.add("intensity_l3");
        n.add("intensity_all");
        n.add("reuse");
        return List.copyOf(n);
    }

    private static List<String> allNames() {
        List<String> n = new ArrayList<>(KERNEL_NAMES);
        for (int slot = 0; slot < STORE_SLOTS; slot++) for (String s : STORE_NAMES) n.add("s" + slot + "." + s);
        return List.copyOf(n);
    }

    private static float log(double x) {
        return (float) (Math.log1p(Math.max(0, x)) / Math.log(2));
    }

    private static long constant(PrimExpr e, long orElse) {
        Interval i = Bounds.of(e, Map.of());
        return i.isPoint() ? i.min() : orElse;
    }

    private static int bytes(DType t) {
        return Math.max(1, t.bits() / 8) * t.lanes();
    }

    /** One enclosing loop as the walk met it. */
    private record Loop(Var var, long min, long extent, ForKind kind) {}

    /** One buffer access of a store (its loads and the store itself). */
    private record Access(Buffer buffer, List<PrimExpr> indices, boolean local) {}

    /** What one store statement does, from the loops around it. */
    private static final class StoreStats {
        final double trips, flopsPerRun;
        final int accesses;
        final float[] features;

        StoreStats(List<Loop> loops, List<Access> accesses, double flopsPerRun, double intOpsPerRun, boolean localStore) {
            this.flopsPerRun = flopsPerRun;
            this.accesses = accesses.size();
            double trips = 1, unroll = 1, parallel = 1, perThread = 1;
            int unrolled = 0, vectorPos = 0;
            long vectorWidth = 0;
            int innermostParallel = -1;
            for (int d = 0; d < loops.size(); d++) {
                Loop l = loops.get(d);
                trips *= l.extent;
                if (l.kind == ForKind.UNROLLED) {
                    unroll *= l.extent;
                    unrolled++;
                }
                if (l.kind == ForKind.PARALLEL) {
                    parallel *= l.extent;
                    innermostParallel = d;
                }
                if (l.kind == ForKind.VECTORIZED) {
                    vectorWidth = l.extent;
                    vectorPos = loops.size() - d;
                }
            }
            for (int d = innermostParallel + 1; d < loops.size(); d++) perThread *= loops.get(d).extent;
            this.trips = trips;
            List<Float> f = new ArrayList<>();
            f.add(log(trips));
            f.add(log(trips * flopsPerRun));
            f.add(log(trips * intOpsPerRun));
            f.add(log(loops.size()));
            f.add(log(loops.isEmpty() ? 1 : loops.getLast().extent));
            f.add(log(vectorWidth));
            f.add((float) vectorPos);
            f.add(log(unroll));
            f.add((float) unrolled);
            f.add(log(parallel));
            f.add(log(perThread));
            f.add(log(accesses.size() - 1));
            f.add(localStore ? 1f : 0f);
            int[] strides = innermostStrides(loops, accesses);
            f.add((float) strides[0]);
            f.add((float) strides[1]);
            f.add((float) strides[2]);
            double bytesL3 = 0, bytesAll = 0;
            for (int level : LEVELS) {
                double b = globalBytes(loops, accesses, level);
                if (level == 3) bytesL3 = b;
                f.add(log(b));
            }
            bytesAll = globalBytes(loops, accesses, loops.size());
            f.add(log(bytesAll));
            f.add(log(flopsPerRun * innerTrips(loops, 3) / Math.max(1, bytesL3)));
            f.add(log(flopsPerRun * trips / Math.max(1, bytesAll)));
            // bytes the global accesses read or write over all trips, per distinct byte: how often data is re-touched
            double touched = 0;
            for (Access a : accesses) if (!a.local) touched += trips * bytes(a.buffer.dtype());
            f.add(log(touched / Math.max(1, bytesAll)));
            features = new float[f.size()];
            for (int k = 0; k < features.length; k++) features[k] = f.get(k);
        }

        float[] vector() {
            return features;
        }

        private static double innerTrips(List<Loop> loops, int level) {
            double t = 1;
            for (int d = Math.max(0, loops.size() - level); d < loops.size(); d++) t *= loops.get(d).extent;
            return t;
        }

        /**
         * Distinct bytes of global buffers the accesses touch while the innermost {@code level} loops run once
         * (outer loop variables fixed at their first value): per dimension the span of its index over those loops,
         * by interval bounds (sound, so an over-estimate when an index wraps), at most the dimension.
         */
        private static double globalBytes(List<Loop> loops, List<Access> accesses, int level) {
            Map<Var, Interval> ranges = new HashMap<>();
            int inner = Math.max(0, loops.size() - level);
            for (int d = 0; d < loops.size(); d++) {
                Loop l = loops.get(d);
                ranges.put(l.var, d >= inner ? new Interval(l.min, l.min + l.extent - 1) : Interval.point(l.min));
            }
            // the same buffer read twice (a stencil's neighbours) counts once, with the larger footprint
            Map<Long, Double> perBuffer = new HashMap<>();
            for (Access a : accesses) {
                if (a.local) continue;
                double elements = 1;
                for (int k = 0; k < a.indices.size(); k++) {
                    long dim = a.buffer.shape().get(k);
                    Interval i = Bounds.of(a.indices.get(k), ranges);
                    long span = i.boundedBelow() && i.boundedAbove() ? i.max() - i.min() + 1 : dim;
                    elements *= Math.clamp(span, 1, dim);
                }
                perBuffer.merge(a.buffer.id(), elements * bytes(a.buffer.dtype()), Math::max);
            }
            return perBuffer.values().stream().mapToDouble(Double::doubleValue).sum();
        }

        /**
         * How the innermost loop walks each access: [stride 0 (the value is reused across the loop), stride 1
         * (contiguous), any other stride]; an access whose index is not affine in the loop counts as strided.
         */
        private static int[] innermostStrides(List<Loop> loops, List<Access> accesses) {
            int[] out = new int[3];
            if (loops.isEmpty()) return out;
            Loop in = loops.getLast();
            Map<Var, Interval> at0 = new HashMap<>(), at1 = new HashMap<>();
            for (Loop l : loops) {
                at0.put(l.var, Interval.point(l.min));
                at1.put(l.var, Interval.point(l.var == in.var ? l.min + 1 : l.min));
            }
            for (Access a : accesses) {
                long delta = 0, rowStride = 1;
                boolean affine = true;
                for (int k = a.indices.size() - 1; k >= 0; k--) {
                    Interval x0 = Bounds.of(a.indices.get(k), at0), x1 = Bounds.of(a.indices.get(k), at1);
                    if (!x0.isPoint() || !x1.isPoint()) {
                        affine = false;
                        break;
                    }
                    delta += (x1.min() - x0.min()) * rowStride;
                    rowStride *= a.buffer.shape().get(k);
                }
                out[!affine ? 2 : delta == 0 ? 0 : Math.abs(delta) == 1 ? 1 : 2]++;
            }
            return out;
        }
    }

    /** The walk over the loop nest: the loop stack, the buffers' scopes, the stores met. */
    private static final class Walk {
        final Set<Long> global = new HashSet<>();
        final Set<Long> local = new HashSet<>();
        final Map<Long, Double> globalBytes = new HashMap<>();
        final List<StoreStats> stores = new ArrayList<>();
        double localBytes, maxLocalElements, outerParallelExtent;
        int parallelLoops, loops, maxDepth;

        void stmt(Stmt s, List<Loop> around) {
            switch (s) {
                case For f -> {
                    loops++;
                    long extent = Math.max(1, constant(f.extent(), 1));
                    if (f.kind() == ForKind.PARALLEL) {
                        parallelLoops++;
                        if (around.stream().noneMatch(l -> l.kind == ForKind.PARALLEL)) outerParallelExtent = Math.max(outerParallelExtent, extent);
                    }
                    around.add(new Loop(f.var(), constant(f.min(), 0), extent, f.kind()));
                    maxDepth = Math.max(maxDepth, around.size());
                    stmt(f.body(), around);
                    around.removeLast();
                }
                case Store st -> store(st, around);
                case Allocate a -> {
                    if (a.scope() == Scope.LOCAL) {
                        local.add(a.buffer().id());
                        localBytes += a.buffer().elementCount() * bytes(a.buffer().dtype());
                        maxLocalElements = Math.max(maxLocalElements, a.buffer().elementCount());
                    } else {
                        global.add(a.buffer().id());
                    }
                    stmt(a.body(), around);
                }
                case IfThenElse i -> {
                    stmt(i.then(), around);
                    i.otherwise().ifPresent(o -> stmt(o, around));
                }
                case Seq q -> q.stmts().forEach(x -> stmt(x, around));
                case Evaluate e -> { }
            }
        }

        private void store(Store st, List<Loop> around) {
            List<Access> accesses = new ArrayList<>();
            double[] ops = new double[2]; // float operations, integer (index) operations
            expr(st.value(), accesses, ops);
            for (PrimExpr i : st.indices()) expr(i, accesses, ops);
            boolean localStore = local.contains(st.buffer().id());
            accesses.add(new Access(st.buffer(), st.indices(), localStore));
            for (Access a : accesses) {
                if (!a.local) globalBytes.put(a.buffer.id(), (double) a.buffer.elementCount() * bytes(a.buffer.dtype()));
            }
            stores.add(new StoreStats(List.copyOf(around), accesses, ops[0], ops[1], localStore));
        }

        private void expr(PrimExpr e, List<Access> accesses, double[] ops) {
            switch (e) {
                case IntImm i -> { }
                case FloatImm f -> { }
                case Var v -> { }
                case Load l -> {
                    accesses.add(new Access(l.buffer(), l.indices(), local.contains(l.buffer().id())));
                    for (PrimExpr i : l.indices()) expr(i, accesses, ops);
                }
                case TensorLoad t -> t.indices().forEach(i -> expr(i, accesses, ops));
                case Binary b -> {
                    ops[isFloat(b.a().dtype()) ? 0 : 1]++;
                    expr(b.a(), accesses, ops);
                    expr(b.b(), accesses, ops);
                }
                case Unary u -> {
                    ops[isFloat(u.dtype()) ? 0 : 1]++;
                    expr(u.a(), accesses, ops);
                }
                case Cast c -> expr(c.value(), accesses, ops);
                case BitCast c -> expr(c.value(), accesses, ops);
                case Select s -> {
                    ops[isFloat(s.dtype()) ? 0 : 1]++;
                    expr(s.condition(), accesses, ops);
                    expr(s.then(), accesses, ops);
                    expr(s.otherwise(), accesses, ops);
                }
                case Call c -> {
                    ops[0]++;
                    c.args().forEach(a -> expr(a, accesses, ops));
                }
                case Reduce r -> expr(r.source(), accesses, ops);
            }
        }

        private static boolean isFloat(DType t) {
            return t.code() == DType.Code.FLOAT || t.code() == DType.Code.BFLOAT;
        }
    }
}
