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
 * {@code einsum} is one reduction over the summed labels.
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
