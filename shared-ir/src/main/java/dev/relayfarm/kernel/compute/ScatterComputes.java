package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.Combiner;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.transform.ScatterElements;
import dev.relayfarm.ops.transform.ScatterNd;
import dev.relayfarm.ops.transform.ScatterReduction;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Compute rules of {@code scatter_elements} and {@code scatter_nd}, written in gather form: a scatter's
 * writes collide (duplicate indices), so instead of one stage per update each output element scans the
 * updates that could land on it and folds in those whose index equals its position.
 * <pre>
 * scatter_elements(%d: (4, 3), %i: (2, 3), %u: (2, 3), axis=0, reduction="add")
 *   ==> out[p, q] = fold_{r in 0..2} (r == 0 ? d[p, q] : (hit(i[r-1, q], p) ? u[r-1, q] : -0.0))
 * </pre>
 * Semantics are the interpreter's ({@link ScatterReduction#apply} in row-major order of the updates):
 * <ul>
 * <li>add, mul, min, max: one reduction whose first step is data's element and whose next steps are
 *     the updates in row-major order, a non-matching update contributing the combiner's identity
 *     ({@code -0.0} for a float add, so even data's {@code -0.0} survives). The fold runs in the same
 *     order as the interpreter's, so float rounding matches step by step (the reduce loop is
 *     sequential per output element under every schedule the compiler applies).
 * <li>update: the last matching update wins, so a first stage takes the largest matching update
 *     position (-1 when none) and the output reads that update, or data where there is none.
 * </ul>
 * An index matches position {@code p} of a dimension of size {@code n} when it is {@code p} or
 * {@code p - n} (negative indices count from the end). Where the interpreter rejects an out-of-range
 * index, the kernel ignores that update (it matches no position); memory stays safe because an index
 * is only compared, never used as an address. Where a float min/max meets NaN, the C kernel's
 * {@code a < b ? a : b} may keep the other operand, unlike Java's {@code Math.min}.
 *
 * <p>Cost: O(outputs x updates) for scatter_nd (every output element scans every index column) and
 * O(outputs x indices' extent along the axis) for scatter_elements (only that axis can differ between
 * an update's position and its target). That is acceptable for the gradients of take, gather,
 * gather_nd and nn.pad that use them, not for a large embedding table.
 */
final class ScatterComputes {
    private ScatterComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("scatter_elements", ScatterComputes::scatterElements);
        r.add("scatter_nd", ScatterComputes::scatterNd);
    }

    /**
     * Where an update lands for one output position: {@code count} candidate updates (numbered in the
     * interpreter's order), whether candidate {@code j} targets the position and, if so, its value.
     * {@code hits} and {@code value} are only evaluated inside a select on {@code j}'s range, so their
     * loads stay inside the inputs.
     */
    private interface Candidates {
        int count();

        PrimExpr hits(List<Var> out, PrimExpr j);

        PrimExpr value(List<Var> out, PrimExpr j);
    }

    private static PrimExpr int64(PrimExpr v) {
        return v.dtype().equals(DType.INT64) ? v : new Cast(DType.INT64, v);
    }

    private static PrimExpr eq(PrimExpr a, PrimExpr b) {
        return new Binary(BinaryOp.EQ, a, b);
    }

    /** {@code index} (read from the indices tensor) names position {@code p} of a dimension of size {@code n}. */
    private static PrimExpr names(PrimExpr index, PrimExpr p, int n) {
        PrimExpr i = int64(index), q = int64(p);
        return eq(i, q).or(eq(i, q.sub(n)));
    }

    /** The row-major coordinates of flat position {@code j} in {@code shape}. */
    private static List<PrimExpr> unflatten(PrimExpr j, List<Integer> shape) {
        List<PrimExpr> out = new ArrayList<>();
        long stride = 1;
        for (int d = shape.size() - 1; d >= 0; d--) {
            PrimExpr q = stride == 1 ? j : j.div(stride);
            out.addFirst(d == 0 ? q : q.mod(shape.get(d)));
            stride *= shape.get(d);
        }
        return out;
    }

    /** Reductions other than update fold booleans with integer arithmetic the C side would not reproduce. */
    private static void checkDtype(OpCall c, ScatterReduction how, DType t) {
        if (t.isBool() && how != ScatterReduction.UPDATE) throw c.fail("reduction " + how.name().toLowerCase() + " on bool data is not supported");
    }

    private static List<Compute> scatter(OpCall c, Tensor data, ScatterReduction how, Candidates cand) {
        DType t = data.dtype();
        checkDtype(c, how, t);
        List<Integer> out = c.outShape();
        int n = cand.count();
        if (how == ScatterReduction.UPDATE) {
            // the last matching candidate (the interpreter applies them in order, so it overwrites the others)
            IterVar r = Te.reduceAxis("r", n);
            IntImm none = new IntImm(-1, DType.INT64);
            Compute last = Te.compute(c.name() + "_last", out, ix ->
                    new Reduce(Combiner.MAX, new Select(cand.hits(ix, r.var()), r.var(), none), List.of(r), none));
            return List.of(Te.compute(c.name(), out, ix -> {
                PrimExpr j = last.at(ix);
                return new Select(j.ge(0), cand.value(ix, j), data.at(ix));
            }));
        }
        // step 0 is data's element, step s >= 1 candidate s - 1
        IterVar r = Te.reduceAxis("r", n + 1);
        PrimExpr identity = identity(how, t);
        Combiner comb = switch (how) {
            case ADD -> Combiner.SUM;
            case MUL -> Combiner.PROD;
            case MIN -> Combiner.MIN;
            case MAX -> Combiner.MAX;
            case UPDATE -> throw new IllegalStateException();
        };
        return List.of(Te.compute(c.name(), out, ix -> {
            PrimExpr j = r.var().sub(1);
            PrimExpr step = new Select(cand.hits(ix, j), cand.value(ix, j), identity);
            return new Reduce(comb, new Select(eq(r.var(), PrimExpr.of(0)), data.at(ix), step), List.of(r), identity);
        }));
    }

    /** The value that leaves an accumulator unchanged under the reduction (and is its start). */
    private static PrimExpr identity(ScatterReduction how, DType t) {
        return switch (how) {
            case ADD -> t.isFloat() ? new FloatImm(-0.0, t) : Te.zero(t);
            case MUL -> Te.constant(t, 1);
            case MIN -> highest(t);
            case MAX -> t.isFloat() ? new FloatImm(Double.NEGATIVE_INFINITY, t) : PoolComputes.lowest(t);
            case UPDATE -> throw new IllegalStateException();
        };
    }

    private static PrimExpr highest(DType t) {
        if (t.isFloat()) return new FloatImm(Double.POSITIVE_INFINITY, t);
        if (t.code() == DType.Code.UINT) return new IntImm(t.bits() == 64 ? -1 : (1L << t.bits()) - 1, t);
        return new IntImm(t.bits() == 64 ? Long.MAX_VALUE : (1L << (t.bits() - 1)) - 1, t);
    }

    /**
     * scatter_elements: output position p receives the updates at q = p with q[axis] free, provided p lies
     * inside indices outside the axis; candidate j is q[axis] = j, and it hits when indices[q] names p[axis].
     */
    private static List<Compute> scatterElements(OpCall c) {
        Tensor data = c.in(0), indices = c.in(1), updates = c.in(2);
        ScatterElements.ScatterElementsAttrs a = c.attrs(ScatterElements.ScatterElementsAttrs.class);
        int rank = data.rank();
        int axis = ElementwiseComputes.normalizeAxis(c, a.axis(), rank);
        List<Integer> ds = data.shape(), is = indices.shape();
        Function<List<Var>, PrimExpr> inside = ix -> {
            PrimExpr cond = null;
            for (int d = 0; d < rank; d++) {
                if (d == axis || is.get(d) >= ds.get(d)) continue; // the relation guarantees is[d] <= ds[d]
                PrimExpr lt = ix.get(d).lt(is.get(d));
                cond = cond == null ? lt : cond.and(lt);
            }
            return cond;
        };
        Function<List<Var>, Function<PrimExpr, List<PrimExpr>>> at = ix -> j -> {
            List<PrimExpr> q = new ArrayList<>(ix);
            q.set(axis, j);
            return q;
        };
        return scatter(c, data, a.reduction(), new Candidates() {
            @Override
            public int count() {
                return is.get(axis);
            }

            @Override
            public PrimExpr hits(List<Var> ix, PrimExpr j) {
                PrimExpr hit = names(indices.at(at.apply(ix).apply(j)), ix.get(axis), ds.get(axis));
                PrimExpr cond = inside.apply(ix);
                // nested so indices is read only inside its shape
                return cond == null ? hit : new Select(cond, hit, new IntImm(0, hit.dtype()));
            }

            @Override
            public PrimExpr value(List<Var> ix, PrimExpr j) {
                return updates.at(at.apply(ix).apply(j));
            }
        });
    }

    /**
     * scatter_nd: candidate j is index column y = unflatten(j, Y) (indices (M, Y...)); it hits output
     * position p when indices[k, y] names p[k] for every k < M, and brings updates[y, p[M:]].
     */
    private static List<Compute> scatterNd(OpCall c) {
        Tensor data = c.in(0), indices = c.in(1), updates = c.in(2);
        ScatterNd.ScatterNdAttrs a = c.attrs(ScatterNd.ScatterNdAttrs.class);
        List<Integer> ds = data.shape(), is = indices.shape();
        int m = is.getFirst();
        List<Integer> ys = is.subList(1, is.size());
        int count = ys.stream().reduce(1, (p, q) -> p * q);
        return scatter(c, data, a.mode(), new Candidates() {
            @Override
            public int count() {
                return count;
            }

            @Override
            public PrimExpr hits(List<Var> ix, PrimExpr j) {
                List<PrimExpr> y = unflatten(j, ys);
                PrimExpr all = null;
                for (int k = 0; k < m; k++) {
                    List<PrimExpr> iidx = new ArrayList<>();
                    iidx.add(PrimExpr.of(k));
                    iidx.addAll(y);
                    PrimExpr hit = names(indices.at(iidx), ix.get(k), ds.get(k));
                    all = all == null ? hit : all.and(hit);
                }
                return all;
            }

            @Override
            public PrimExpr value(List<Var> ix, PrimExpr j) {
                List<PrimExpr> uidx = new ArrayList<>(unflatten(j, ys));
                uidx.addAll(ix.subList(m, ix.size()));
                return updates.at(uidx);
            }
        });
    }
}
