package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Call;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.MathFn;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.nn.Lrn;
import dev.relayfarm.ops.nn.Normalization;
import java.util.ArrayList;
import java.util.List;

/**
 * Compute rules of the normalizations: {@code nn.batch_norm} (inference semantics, a 3-tuple: the
 * normalized data and the moving mean and variance passed through), {@code nn.layer_norm} (mean and
 * variance along the axis as two reduction stages) and {@code nn.lrn} (the sum of squares over the
 * channel window as a reduction). Like the interpreter they compute in float64 and round once, with
 * its operation order, so float32 results agree to the last bit in most elements (lrn excepted: see there).
 * <pre>
 * nn.batch_norm(%x, %g, %b, %m, %v, axis=1)
 *   ==> out0[n, c, h, w] = (x[n, c, h, w] - m[c]) * (g[c] / sqrt(v[c] + eps)) + b[c];  out1 = m;  out2 = v
 * </pre>
 * SimplifyInference rewrites batch_norm and layer_norm into element-wise arithmetic at -O3; these
 * rules serve programs compiled without it.
 */
final class NormComputes {
    private NormComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("nn.batch_norm", NormComputes::batchNorm);
        r.add("nn.layer_norm", NormComputes::layerNorm);
        r.add("nn.lrn", NormComputes::lrn);
    }

    private static PrimExpr f64(PrimExpr v) {
        return v.dtype().equals(DType.FLOAT64) ? v : new Cast(DType.FLOAT64, v);
    }

    private static PrimExpr d(double v) {
        return new FloatImm(v, DType.FLOAT64);
    }

    private static PrimExpr sqrt(PrimExpr v) {
        return new Call(MathFn.SQRT, List.of(v));
    }

    private static void requireFloat(OpCall c, DType t) {
        if (!t.isFloat()) throw c.fail("needs a float tensor, got " + t);
    }

    private static int axis(OpCall c, int axis, int rank) {
        if (axis < -rank || axis >= rank) throw c.fail("axis must be in [" + -rank + ", " + (rank - 1) + "], got " + axis);
        return axis < 0 ? axis + rank : axis;
    }

    private static List<Compute> batchNorm(OpCall c) {
        Tensor x = c.in(0), gamma = c.in(1), beta = c.in(2), mean = c.in(3), var = c.in(4);
        Normalization.NormAttrs a = c.attrs(Normalization.NormAttrs.class);
        DType t = x.dtype();
        requireFloat(c, t);
        int ax = axis(c, a.axis(), x.rank());
        Compute out = Te.compute(c.name(), c.outShape(0), ix -> {
            PrimExpr ch = ix.get(ax);
            PrimExpr mul = new Binary(BinaryOp.DIV, a.scale() ? f64(gamma.at(ch)) : d(1), sqrt(f64(var.at(ch)).add(d(a.epsilon()))));
            PrimExpr y = f64(x.at(ix)).sub(f64(mean.at(ch))).mul(mul).add(a.center() ? f64(beta.at(ch)) : d(0));
            return new Cast(t, y);
        });
        return List.of(out, Te.compute(c.name() + "_mean", c.outShape(1), mean::at), Te.compute(c.name() + "_var", c.outShape(2), var::at));
    }

    /** {@code index} (without the axis) with {@code at} inserted at {@code axis}. */
    private static List<PrimExpr> with(List<? extends PrimExpr> index, int axis, PrimExpr at) {
        List<PrimExpr> out = new ArrayList<>(index);
        out.add(axis, at);
        return out;
    }

    private static List<Compute> layerNorm(OpCall c) {
        Tensor x = c.in(0), gamma = c.in(1), beta = c.in(2);
        Normalization.NormAttrs a = c.attrs(Normalization.NormAttrs.class);
        DType t = x.dtype();
        requireFloat(c, t);
        int ax = axis(c, a.axis(), x.rank());
        int n = x.shape().get(ax);
        List<Integer> rowShape = new ArrayList<>(x.shape());
        rowShape.remove(ax);
        if (rowShape.isEmpty()) rowShape.add(1);
        boolean scalarRows = x.rank() == 1;
        IterVar rm = Te.reduceAxis("rm", n), rv = Te.reduceAxis("rv", n);
        java.util.function.Function<List<Var>, List<PrimExpr>> row = ix -> scalarRows ? List.of() : new ArrayList<>(ix);
        Compute sum = Te.compute(c.name() + "_sum", rowShape, ix -> Te.sum(f64(x.at(with(row.apply(ix), ax, rm.var()))), rm));
        Compute mean = Te.compute(c.name() + "_mean", rowShape, ix -> new Binary(BinaryOp.DIV, sum.at(ix), d(n)));
        Compute sq = Te.compute(c.name() + "_sq", rowShape, ix -> {
            PrimExpr diff = f64(x.at(with(row.apply(ix), ax, rv.var()))).sub(mean.at(ix));
            return Te.sum(diff.mul(diff), rv);
        });
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> r = new ArrayList<>(ix);
            r.remove(ax);
            if (scalarRows) r.add(PrimExpr.of(0));
            PrimExpr inv = new Binary(BinaryOp.DIV, d(1), sqrt(new Binary(BinaryOp.DIV, sq.at(r), d(n)).add(d(a.epsilon()))));
            PrimExpr y = f64(x.at(ix)).sub(mean.at(r)).mul(inv);
            if (a.scale()) y = y.mul(f64(gamma.at(ix.get(ax))));
            if (a.center()) y = y.add(f64(beta.at(ix.get(ax))));
            return new Cast(t, y);
        }));
    }

    /**
     * TOPI's window: {@code size} channels starting {@code size / 2} before the element (zeros
     * outside), {@code out = x / (bias + alpha * sum / size)^beta}. Unlike the other rules here it computes
     * float32 (and narrower) tensors in float32: in float64 with {@code pow} it cost 26 ns an element (zfnet512's
     * LRN took a quarter of the model's time); the window's five squares and one power lose nothing a float32
     * result can show beyond an ulp or two. The common exponents are roots, which vectorize, instead of {@code pow}:
     * {@code base^0.75 = sqrt(base) * sqrt(sqrt(base))}, {@code base^0.5 = sqrt(base)}, {@code base^1 = base}.
     */
    private static List<Compute> lrn(OpCall c) {
        Tensor x = c.in(0);
        Lrn.LrnAttrs a = c.attrs(Lrn.LrnAttrs.class);
        DType t = x.dtype();
        requireFloat(c, t);
        DType ct = t.equals(DType.FLOAT64) ? DType.FLOAT64 : DType.FLOAT32;
        java.util.function.Function<PrimExpr, PrimExpr> widen = v -> v.dtype().equals(ct) ? v : new Cast(ct, v);
        java.util.function.DoubleFunction<PrimExpr> k = v -> new FloatImm(v, ct);
        int ax = axis(c, a.axis(), x.rank());
        int n = x.shape().get(ax), half = a.size() / 2;
        IterVar rj = Te.reduceAxis("rj", a.size());
        Compute sq = Te.compute(c.name() + "_sq", x.shape(), ix -> {
            PrimExpr j = ix.get(ax).sub(half).add(rj.var());
            List<PrimExpr> at = new ArrayList<>(ix);
            at.set(ax, j);
            PrimExpr v = widen.apply(x.at(at));
            return Te.sum(new Select(j.ge(PrimExpr.of(0)).and(j.lt(PrimExpr.of(n))), v.mul(v), k.apply(0)), rj);
        });
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            PrimExpr base = k.apply(a.bias()).add(new Binary(BinaryOp.DIV, k.apply(a.alpha()).mul(sq.at(ix)), k.apply(a.size())));
            PrimExpr power = a.beta() == 0.75 ? sqrt(base).mul(sqrt(sqrt(base)))
                    : a.beta() == 0.5 ? sqrt(base)
                    : a.beta() == 1 ? base
                    : new Call(MathFn.POW, List.of(base, k.apply(a.beta())));
            PrimExpr y = new Binary(BinaryOp.DIV, widen.apply(x.at(ix)), power);
            return y.dtype().equals(t) ? y : new Cast(t, y);
        }));
    }
}
