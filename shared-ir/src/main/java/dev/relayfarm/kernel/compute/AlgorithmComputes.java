package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.Combiner;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Unary;
import dev.relayfarm.kernel.expr.UnaryOp;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.algorithm.Einsum;
import dev.relayfarm.ops.algorithm.Scan;
import dev.relayfarm.ops.algorithm.TopK;
import java.util.ArrayList;
import java.util.List;

/**
 * Compute rules of the scans ({@code cumsum}, {@code cumprod}) and {@code topk}, written as
 * reductions because the tensor-expression layer has no loop-carried state:
 * <ul>
 *   <li>a scan element is the reduction of the elements up to it along the axis
 *       ({@code out[k] = sum_{r <= k} x[r]}, {@code r < k} when exclusive), accumulated in float64 or
 *       int64 in order as the interpreter does, so results agree exactly; O(n^2) per line, fine for
 *       the short axes models scan over;</li>
 *   <li>topk ranks every element ({@code rank[i]} = how many elements come before it: larger, or equal
 *       at a lower index; NaN above every number, as the interpreter's {@code Double.compare} orders),
 *       then output position {@code p} picks the element of rank {@code p}. O(n^2) per line.</li>
 * </ul>
 * {@code einsum} is one reduction over the summed labels; {@code det} is Gaussian elimination unrolled over
 * the columns, a few stages per column ({@link #det}).
 *
 * <p>Not covered: the sign of zero in topk's order ({@code -0.0} and {@code 0.0} tie here, the
 * interpreter puts {@code 0.0} first); bool topk.
 */
final class AlgorithmComputes {
    private AlgorithmComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("cumsum", c -> scan(c, false));
        r.add("cumprod", c -> scan(c, true));
        r.add("topk", AlgorithmComputes::topk);
        r.add("einsum", AlgorithmComputes::einsum);
        r.add("det", AlgorithmComputes::det);
    }

    /** The largest matrix {@code det} unrolls (five stages per column). */
    static final int MAX_DET_SIZE = 32;

    /**
     * {@code det}: the interpreter's Gaussian elimination with partial pivoting, in float64, unrolled over
     * the columns of the (static) M x M matrices, one stage per step since the tensor-expression layer
     * has no loop-carried state. For column {@code c}, on every matrix of the batch at once:
     * <ol>
     *   <li>{@code max_c}: the largest |a[r, c]| over rows r >= c;</li>
     *   <li>{@code pivot_c}: the first such row reaching it (the interpreter keeps the earliest of equal
     *       candidates: it only moves on a strictly larger one);</li>
     *   <li>{@code a_(c+1)}: rows c and pivot swapped, then each row r > c minus {@code f * row c} from
     *       column c on, {@code f = a[r, c] / a[c, c]} (the interpreter's operation order per element);</li>
     *   <li>{@code det_c}: the previous product, negated on a swap, times the pivot;
     *       {@code zero_c}: whether some pivot so far was 0 (the interpreter answers 0 right there).</li>
     * </ol>
     * O(M^3) per matrix like the interpreter. Not covered: NaN elements (the interpreter's pivot search
     * skips them in its own order), M above {@link #MAX_DET_SIZE}.
     */
    private static List<Compute> det(OpCall c) {
        Tensor x = c.in(0);
        int rank = x.rank();
        int m = x.shape().get(rank - 1);
        if (m > MAX_DET_SIZE) throw c.fail("matrices larger than " + MAX_DET_SIZE + "x" + MAX_DET_SIZE + " are not unrolled, got " + m + "x" + m);
        DType f64 = DType.FLOAT64;
        List<Integer> batch = x.shape().subList(0, rank - 2);
        Tensor a = Te.compute(c.name() + "_a0", x.shape(), ix -> as(x.at(ix), f64));
        Tensor det = null, zero = null;
        for (int col = 0; col < m; col++) {
            final Tensor cur = a, prevDet = det, prevZero = zero;
            final int cc = col;
            IterVar r = Te.reduceAxis("r", m);
            Compute max = Te.compute(c.name() + "_max" + col, batch, ib -> Te.max(
                    new Select(r.var().ge(cc), abs(cur.at(at(ib, r.var(), PrimExpr.of(cc)))), new dev.relayfarm.kernel.expr.FloatImm(-1, f64)), r));
            IterVar q = Te.reduceAxis("q", m);
            Compute first = Te.compute(c.name() + "_first" + col, batch, ib -> Te.min(new Select(
                    q.var().ge(cc).and(new Binary(BinaryOp.EQ, abs(cur.at(at(ib, q.var(), PrimExpr.of(cc)))), max.at(ib))), q.var(), PrimExpr.of(m)), q));
            // no row matched only when NaN is involved: keep row c then
            Compute pivot = Te.compute(c.name() + "_pivot" + col, batch, ib -> new Select(first.at(ib).lt(m), first.at(ib), PrimExpr.of(cc)));
            a = Te.compute(c.name() + "_a" + (col + 1), x.shape(), ix -> {
                List<PrimExpr> ib = new ArrayList<>(ix.subList(0, rank - 2));
                PrimExpr i = ix.get(rank - 2), k = ix.get(rank - 1);
                PrimExpr p = pivot.at(ib);
                PrimExpr si = swapped(i, p, cc);
                PrimExpr sc = p; // row c after the swap is the pivot row
                PrimExpr sik = cur.at(at(ib, si, k));
                PrimExpr f = new Binary(BinaryOp.DIV, cur.at(at(ib, si, PrimExpr.of(cc))), cur.at(at(ib, sc, PrimExpr.of(cc))));
                PrimExpr eliminated = new Binary(BinaryOp.SUB, sik, new Binary(BinaryOp.MUL, f, cur.at(at(ib, sc, k))));
                return new Select(i.gt(PrimExpr.of(cc)).and(k.ge(cc)), eliminated, sik);
            });
            det = Te.compute(c.name() + "_det" + col, batch, ib -> {
                PrimExpr p = pivot.at(ib);
                PrimExpr before = prevDet == null ? new dev.relayfarm.kernel.expr.FloatImm(1, f64) : prevDet.at(ib);
                PrimExpr signed = new Select(new Binary(BinaryOp.NE, p, PrimExpr.of(cc)), new Unary(UnaryOp.NEG, before), before);
                return new Binary(BinaryOp.MUL, signed, cur.at(at(ib, p, PrimExpr.of(cc))));
            });
            zero = Te.compute(c.name() + "_zero" + col, batch, ib -> {
                PrimExpr isZero = new Binary(BinaryOp.EQ, cur.at(at(ib, pivot.at(ib), PrimExpr.of(cc))), new dev.relayfarm.kernel.expr.FloatImm(0, f64));
                return prevZero == null ? isZero : prevZero.at(ib).or(isZero);
            });
        }
        final Tensor product = det, anyZero = zero;
        DType t = c.outDtype();
        return List.of(Te.compute(c.name(), batch, ib -> as(new Select(anyZero.at(ib), new dev.relayfarm.kernel.expr.FloatImm(0, f64), product.at(ib)), t)));
    }

    /** Row {@code i} of the matrix after swapping rows {@code c} and {@code p}: where it was read from. */
    private static PrimExpr swapped(PrimExpr i, PrimExpr p, int c) {
        return new Select(new Binary(BinaryOp.EQ, i, PrimExpr.of(c)), p, new Select(new Binary(BinaryOp.EQ, i, p), PrimExpr.of(c), i));
    }

    private static List<PrimExpr> at(List<? extends PrimExpr> batch, PrimExpr row, PrimExpr col) {
        List<PrimExpr> out = new ArrayList<>(batch);
        out.add(row);
        out.add(col);
        return out;
    }

    private static PrimExpr abs(PrimExpr v) {
        return new dev.relayfarm.kernel.expr.Call(dev.relayfarm.kernel.expr.MathFn.FABS, List.of(v));
    }

    private static PrimExpr as(PrimExpr v, DType t) {
        return v.dtype().equals(t) ? v : new Cast(t, v);
    }

    /** Row-major multi-index of flat index {@code flat} in {@code shape}. */
    private static List<PrimExpr> unflatten(PrimExpr flat, List<Integer> shape) {
        PrimExpr[] out = new PrimExpr[shape.size()];
        long stride = 1;
        for (int i = shape.size() - 1; i >= 0; i--) {
            PrimExpr q = stride == 1 ? flat : flat.div(stride);
            out[i] = i == 0 ? q : q.mod(shape.get(i));
            stride *= shape.get(i);
        }
        return List.of(out);
    }

    private static List<Compute> scan(OpCall c, boolean product) {
        Tensor x = c.in(0);
        Scan.ScanAttrs a = c.attrs(Scan.ScanAttrs.class);
        DType t = c.outDtype();
        if (t.isBool() || x.dtype().isBool()) throw c.fail("bool scans are not supported");
        DType acc = t.isFloat() ? DType.FLOAT64 : DType.INT64;
        List<Integer> out = c.outShape();
        int axis;
        if (a.axis() == null) {
            axis = 0;
        } else {
            long ax = a.axis();
            if (ax < -out.size() || ax >= out.size()) throw c.fail("axis must be in [" + -out.size() + ", " + (out.size() - 1) + "], got " + ax);
            axis = (int) (ax < 0 ? ax + out.size() : ax);
        }
        IterVar r = Te.reduceAxis("rs", out.get(axis));
        Compute sum = Te.compute(c.name() + "_acc", out, ix -> {
            List<PrimExpr> at = new ArrayList<>(ix);
            at.set(axis, r.var());
            PrimExpr element = a.axis() == null ? x.at(unflatten(r.var(), x.shape())) : x.at(at);
            PrimExpr included = a.exclusive() ? r.var().lt(ix.get(axis)) : r.var().le(ix.get(axis));
            PrimExpr identity = Te.constant(acc, product ? 1 : 0);
            return new Reduce(product ? Combiner.PROD : Combiner.SUM, new Select(included, as(element, acc), identity), List.of(r), identity);
        });
        if (acc.equals(t)) return List.of(sum);
        return List.of(Te.compute(c.name(), out, ix -> ElementwiseComputes.cast(sum.at(ix), t)));
    }

    private static PrimExpr isNan(PrimExpr v) {
        return new Binary(BinaryOp.NE, v, v);
    }

    /** {@code a} sorts above {@code b} in the interpreter's order (NaN above every number). */
    private static PrimExpr greater(PrimExpr a, PrimExpr b) {
        PrimExpr gt = a.gt(b);
        return a.dtype().isFloat() ? gt.or(isNan(a).and(new Unary(UnaryOp.NOT, isNan(b)))) : gt;
    }

    private static PrimExpr same(PrimExpr a, PrimExpr b) {
        PrimExpr eq = new Binary(BinaryOp.EQ, a, b);
        return a.dtype().isFloat() ? eq.or(isNan(a).and(isNan(b))) : eq;
    }

    private static List<Compute> topk(OpCall c) {
        Tensor x = c.in(0);
        TopK.TopKAttrs a = c.attrs(TopK.TopKAttrs.class);
        DType t = x.dtype();
        if (t.isBool()) throw c.fail("bool topk is not supported");
        int rank = x.rank();
        long ax = a.axis();
        if (ax < -rank || ax >= rank) throw c.fail("axis must be in [" + -rank + ", " + (rank - 1) + "], got " + ax);
        int axis = (int) (ax < 0 ? ax + rank : ax);
        int n = x.shape().get(axis);
        IterVar rj = Te.reduceAxis("rj", n);
        // rank[.., i, ..]: the elements before element i in the output order
        Compute order = Te.compute(c.name() + "_rank", x.shape(), ix -> {
            List<PrimExpr> other = new ArrayList<>(ix);
            other.set(axis, rj.var());
            PrimExpr xi = x.at(ix), xj = x.at(other);
            PrimExpr ahead = a.isAscend() ? greater(xi, xj) : greater(xj, xi);
            PrimExpr before = ahead.or(same(xi, xj).and(rj.var().lt(ix.get(axis))));
            return Te.sum(new Select(before, new IntImm(1, DType.INT32), new IntImm(0, DType.INT32)), rj);
        });
        List<Integer> outShape = c.outShape(0);
        IterVar ri = Te.reduceAxis("ri", n), rk = Te.reduceAxis("rk", n);
        Compute values = Te.compute(c.name() + "_values", outShape, ix -> {
            List<PrimExpr> at = new ArrayList<>(ix);
            at.set(axis, ri.var());
            return Te.sum(new Select(new Binary(BinaryOp.EQ, order.at(at), ix.get(axis)), x.at(at), Te.zero(t)), ri);
        });
        DType indexType = a.dtype();
        Compute position = Te.compute(c.name() + "_position", outShape, ix -> {
            List<PrimExpr> at = new ArrayList<>(ix);
            at.set(axis, rk.var());
            return Te.sum(new Select(new Binary(BinaryOp.EQ, order.at(at), ix.get(axis)), as(rk.var(), DType.INT64), Te.zero(DType.INT64)), rk);
        });
        Compute indices = indexType.equals(DType.INT64) ? position
                : Te.compute(c.name() + "_indices", outShape, ix -> as(position.at(ix), indexType));
        return switch (a.retType()) {
            case "values" -> List.of(values);
            case "indices" -> List.of(indices);
            default -> List.of(values, indices);
        };
    }

    /**
     * {@code out[output labels] = sum over the other labels of prod_t x_t[its labels]}, one reduce axis
     * per summed label (the first outermost, as the interpreter enumerates them), accumulated in
     * float64 or int64; an ellipsis dim of size 1 broadcasts (index 0).
     */
    private static List<Compute> einsum(OpCall c) {
        List<Tensor> xs = c.inputs();
        String equation = c.attrs(Einsum.EinsumAttrs.class).equation();
        Einsum.Plan p = Einsum.plan(equation, xs.stream().mapToInt(Tensor::rank).toArray());
        int[] size = new int[p.labelCount()];
        java.util.Arrays.fill(size, 1);
        for (int t = 0; t < xs.size(); t++) {
            int[] axes = p.operands().get(t);
            for (int i = 0; i < axes.length; i++) size[axes[i]] = Math.max(size[axes[i]], xs.get(t).shape().get(i));
        }
        DType t = c.outDtype();
        if (t.isBool()) throw c.fail("bool einsum is not supported");
        DType acc = t.isFloat() ? DType.FLOAT64 : DType.INT64;
        boolean[] isOut = new boolean[size.length];
        for (int id : p.output()) isOut[id] = true;
        IterVar[] red = new IterVar[size.length];
        List<IterVar> axes = new ArrayList<>();
        for (int id = 0; id < size.length; id++) {
            if (isOut[id]) continue;
            red[id] = Te.reduceAxis("re" + id, size[id]);
            axes.add(red[id]);
        }
        Compute sum = Te.compute(c.name() + (t.equals(acc) ? "" : "_acc"), c.outShape(), ix -> {
            PrimExpr[] label = new PrimExpr[size.length];
            for (int i = 0; i < p.output().length; i++) label[p.output()[i]] = ix.get(i);
            for (int id = 0; id < size.length; id++) if (red[id] != null) label[id] = red[id].var();
            PrimExpr term = null;
            for (int k = 0; k < xs.size(); k++) {
                Tensor x = xs.get(k);
                int[] ids = p.operands().get(k);
                List<PrimExpr> at = new ArrayList<>();
                for (int i = 0; i < ids.length; i++) at.add(x.shape().get(i) == 1 ? PrimExpr.of(0) : label[ids[i]]);
                PrimExpr v = as(x.at(at), acc);
                term = term == null ? v : term.mul(v);
            }
            return axes.isEmpty() ? term : Te.sum(term, axes.toArray(IterVar[]::new));
        });
        if (t.equals(acc)) return List.of(sum);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> ElementwiseComputes.cast(sum.at(ix), t)));
    }
}
