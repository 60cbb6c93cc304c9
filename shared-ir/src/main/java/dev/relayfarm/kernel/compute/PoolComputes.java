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
import dev.relayfarm.ops.layout.Layout;
import dev.relayfarm.ops.nn.GlobalPool2D;
import dev.relayfarm.ops.nn.Pool2D;
import dev.relayfarm.ops.nn.MaxPool2DWithArgmax;
import dev.relayfarm.ops.nn.Pool3D;
import java.util.ArrayList;
import java.util.List;

/**
 * Compute rules of {@code nn.max_pool2d}, {@code nn.avg_pool2d} and the global pools in every layout
 * the operators accept: N, C, H, W in any order with C optionally split into blocks ({@code NCHW},
 * {@code NHWC}, {@code NCHW16c} as alter-op-layout leaves them between blocked convolutions). Input
 * and output layouts may differ; the element mapping is {@link NchwIndex}'s.
 * <pre>
 * nn.max_pool2d(%x: Tensor[(1, 2, 8, 8, 16)], pool_size=[2, 2], strides=[2, 2], layout="NCHW16c")
 *   ==> out[n, cb, y, x, ci] = max_{ry, rx} x[n, cb, 2y + ry, 2x + rx, ci]
 * </pre>
 * Semantics are the interpreter's (TOPI's): max pads with the dtype's lowest value; avg divides by the
 * window positions inside the input, or with count_include_pad inside input + padding (never the extra
 * ceil_mode cells), summing in float64 as the interpreter does.
 */
final class PoolComputes {
    private PoolComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("nn.max_pool2d", c -> pool(c, true));
        r.add("nn.avg_pool2d", c -> pool(c, false));
        r.add("nn.max_pool3d", c -> pool3d(c, true));
        r.add("nn.avg_pool3d", c -> pool3d(c, false));
        r.add("nn.max_pool2d_with_argmax", PoolComputes::maxPoolWithArgmax);
        r.add("nn.global_max_pool2d", c -> globalPool(c, true));
        r.add("nn.global_avg_pool2d", c -> globalPool(c, false));
    }

    private static PrimExpr as(PrimExpr v, DType t) {
        return v.dtype().equals(t) ? v : new Cast(t, v);
    }

    /** TVM pads max pooling with the dtype's lowest finite value. */
    static PrimExpr lowest(DType t) {
        if (t.isFloat()) return new FloatImm(t.bits() == 64 ? -Double.MAX_VALUE : -Float.MAX_VALUE, t);
        if (t.code() == DType.Code.UINT || t.isBool()) return Te.zero(t);
        return new IntImm(t.bits() == 64 ? Long.MIN_VALUE : -(1L << (t.bits() - 1)), t);
    }

    private static PrimExpr inRange(PrimExpr v, int lo, int hi) {
        return v.ge(PrimExpr.of(lo)).and(v.lt(PrimExpr.of(hi)));
    }

    /**
     * Max: the largest element inside the window (the lowest value when none is). Avg: the sum of the
     * elements inside divided by their count, or with count_include_pad by the window positions inside
     * the padded input (a second reduction counts them).
     */
    private static List<Compute> pool(OpCall c, boolean max) {
        Tensor x = c.in(0);
        Pool2D.Pool2DAttrs a = c.attrs(Pool2D.Pool2DAttrs.class);
        Layout in = a.layout(), outLayout = a.outLayout();
        DType t = x.dtype();
        int h = x.shape().get(in.indexOf('H')), w = x.shape().get(in.indexOf('W'));
        int kh = a.poolSize()[0], kw = a.poolSize()[1], sh = a.strides()[0], sw = a.strides()[1], dh = a.dilation()[0], dw = a.dilation()[1];
        int pt = a.padding()[0], pl = a.padding()[1], pb = a.padding()[2], pr = a.padding()[3];
        List<Integer> out = c.outShape();
        IterVar ry = Te.reduceAxis("ry", kh), rx = Te.reduceAxis("rx", kw);
        if (max) {
            if (t.isBool()) throw c.fail("bool pooling is not supported");
            return List.of(Te.compute(c.name(), out, ix -> {
                NchwIndex o = NchwIndex.of(outLayout, ix);
                PrimExpr iy = o.h().mul(sh).sub(pt).add(ry.var().mul(dh)), ixx = o.w().mul(sw).sub(pl).add(rx.var().mul(dw));
                PrimExpr v = new Select(inRange(iy, 0, h).and(inRange(ixx, 0, w)), x.at(o.at(in, iy, ixx)), lowest(t));
                return new Reduce(Combiner.MAX, v, List.of(ry, rx), lowest(t));
            }));
        }
        if (!t.isFloat()) throw c.fail("average pooling needs a float tensor, got " + t);
        IterVar cy = Te.reduceAxis("cy", kh), cx = Te.reduceAxis("cx", kw);
        Compute count = Te.compute(c.name() + "_count", out, ix -> {
            NchwIndex o = NchwIndex.of(outLayout, ix);
            PrimExpr iy = o.h().mul(sh).sub(pt).add(cy.var().mul(dh)), ixx = o.w().mul(sw).sub(pl).add(cx.var().mul(dw));
            PrimExpr cond = a.countIncludePad()
                    ? iy.le(PrimExpr.of(h + pb - 1)).and(ixx.le(PrimExpr.of(w + pr - 1)))
                    : inRange(iy, 0, h).and(inRange(ixx, 0, w));
            return Te.sum(new Select(cond, new IntImm(1, DType.INT32), new IntImm(0, DType.INT32)), cy, cx);
        });
        Compute sum = Te.compute(c.name() + "_sum", out, ix -> {
            NchwIndex o = NchwIndex.of(outLayout, ix);
            PrimExpr iy = o.h().mul(sh).sub(pt).add(ry.var().mul(dh)), ixx = o.w().mul(sw).sub(pl).add(rx.var().mul(dw));
            PrimExpr v = as(x.at(o.at(in, iy, ixx)), DType.FLOAT64);
            return Te.sum(new Select(inRange(iy, 0, h).and(inRange(ixx, 0, w)), v, Te.zero(DType.FLOAT64)), ry, rx);
        });
        return List.of(Te.compute(c.name(), out, ix -> as(new Binary(BinaryOp.DIV, sum.at(ix), as(count.at(ix).max(new IntImm(1, DType.INT32)), DType.FLOAT64)), t)));
    }

    /**
     * nn.max_pool2d_with_argmax on NCHW: the max pool, then the smallest row-major position in the plane
     * whose element equals it (the first maximum in window order, as the interpreter picks), then that
     * position made a flat input index, column-major within the plane for storage_order 1; -1 when the
     * window holds no input element.
     */
    private static List<Compute> maxPoolWithArgmax(OpCall c) {
        Tensor x = c.in(0);
        MaxPool2DWithArgmax.MaxPoolArgmaxAttrs at = c.attrs(MaxPool2DWithArgmax.MaxPoolArgmaxAttrs.class);
        Pool2D.Pool2DAttrs a = at.pool();
        DType t = x.dtype();
        if (t.isBool()) throw c.fail("bool pooling is not supported");
        int ch = x.shape().get(1), h = x.shape().get(2), w = x.shape().get(3);
        int kh = a.poolSize()[0], kw = a.poolSize()[1], sh = a.strides()[0], sw = a.strides()[1], dh = a.dilation()[0], dw = a.dilation()[1];
        int pt = a.padding()[0], pl = a.padding()[1];
        List<Integer> out = c.outShape();
        IterVar ry = Te.reduceAxis("ry", kh), rx = Te.reduceAxis("rx", kw), py = Te.reduceAxis("py", kh), px = Te.reduceAxis("px", kw);
        Compute best = Te.compute(c.name() + "_value", out, ix -> {
            PrimExpr iy = ix.get(2).mul(sh).sub(pt).add(ry.var().mul(dh)), ixx = ix.get(3).mul(sw).sub(pl).add(rx.var().mul(dw));
            PrimExpr v = new Select(inRange(iy, 0, h).and(inRange(ixx, 0, w)), x.at(ix.get(0), ix.get(1), iy, ixx), lowest(t));
            return new Reduce(Combiner.MAX, v, List.of(ry, rx), lowest(t));
        });
        IntImm none = new IntImm(Long.MAX_VALUE, DType.INT64);
        Compute first = Te.compute(c.name() + "_pos", out, ix -> {
            PrimExpr iy = ix.get(2).mul(sh).sub(pt).add(py.var().mul(dh)), ixx = ix.get(3).mul(sw).sub(pl).add(px.var().mul(dw));
            PrimExpr pos = as(iy, DType.INT64).mul(w).add(as(ixx, DType.INT64));
            // nested so the load happens only inside the input
            PrimExpr hit = new Select(new Binary(BinaryOp.EQ, x.at(ix.get(0), ix.get(1), iy, ixx), best.at(ix)), pos, none);
            return new Reduce(Combiner.MIN, new Select(inRange(iy, 0, h).and(inRange(ixx, 0, w)), hit, none), List.of(py, px), none);
        });
        Compute index = Te.compute(c.name() + "_index", out, ix -> {
            PrimExpr p = first.at(ix);
            PrimExpr plane = as(ix.get(0), DType.INT64).mul(ch).add(as(ix.get(1), DType.INT64)).mul((long) h * w);
            PrimExpr inPlane = at.columnMajor() ? p.mod(w).mul(h).add(p.div(w)) : p;
            return new Select(new Binary(BinaryOp.EQ, p, none), new IntImm(-1, DType.INT64), plane.add(inPlane));
        });
        return List.of(best, index);
    }

    /**
     * The NCDHW pools, as {@link #pool} with a depth axis: the window position on each spatial axis is
     * {@code out * stride - pad_begin + r * dilation}, masked to the input (or, for count_include_pad's
     * count, to the input and its end padding).
     */
    private static List<Compute> pool3d(OpCall c, boolean max) {
        Tensor x = c.in(0);
        Pool3D.Pool3DAttrs a = c.attrs(Pool3D.Pool3DAttrs.class);
        DType t = x.dtype();
        List<Integer> out = c.outShape();
        int[] in = {x.shape().get(2), x.shape().get(3), x.shape().get(4)};
        String[] names = {"rz", "ry", "rx"};
        List<IterVar> r = new ArrayList<>(), cr = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            r.add(Te.reduceAxis(names[i], a.poolSize()[i]));
            cr.add(Te.reduceAxis("c" + names[i].substring(1), a.poolSize()[i]));
        }
        // positions (n, c, z, y, x) in the input for output index ix and window axes rs
        java.util.function.BiFunction<List<Var>, List<IterVar>, List<PrimExpr>> at = (ix, rs) -> {
            List<PrimExpr> pos = new ArrayList<>(List.of(ix.get(0), ix.get(1)));
            for (int i = 0; i < 3; i++) pos.add(ix.get(2 + i).mul(a.strides()[i]).sub(a.padding()[i]).add(rs.get(i).var().mul(a.dilation()[i])));
            return pos;
        };
        java.util.function.Function<List<PrimExpr>, PrimExpr> inside = pos -> {
            PrimExpr cond = inRange(pos.get(2), 0, in[0]);
            for (int i = 1; i < 3; i++) cond = cond.and(inRange(pos.get(2 + i), 0, in[i]));
            return cond;
        };
        if (max) {
            if (t.isBool()) throw c.fail("bool pooling is not supported");
            return List.of(Te.compute(c.name(), out, ix -> {
                List<PrimExpr> pos = at.apply(ix, r);
                return new Reduce(Combiner.MAX, new Select(inside.apply(pos), x.at(pos), lowest(t)), r, lowest(t));
            }));
        }
        if (!t.isFloat()) throw c.fail("average pooling needs a float tensor, got " + t);
        Compute count = Te.compute(c.name() + "_count", out, ix -> {
            List<PrimExpr> pos = at.apply(ix, cr);
            PrimExpr cond = inside.apply(pos);
            if (a.countIncludePad()) {
                cond = pos.get(2).le(PrimExpr.of(in[0] + a.padding()[3] - 1));
                for (int i = 1; i < 3; i++) cond = cond.and(pos.get(2 + i).le(PrimExpr.of(in[i] + a.padding()[3 + i] - 1)));
            }
            return Te.sum(new Select(cond, new IntImm(1, DType.INT32), new IntImm(0, DType.INT32)), cr.toArray(IterVar[]::new));
        });
        Compute sum = Te.compute(c.name() + "_sum", out, ix -> {
            List<PrimExpr> pos = at.apply(ix, r);
            return Te.sum(new Select(inside.apply(pos), as(x.at(pos), DType.FLOAT64), Te.zero(DType.FLOAT64)), r.toArray(IterVar[]::new));
        });
        return List.of(Te.compute(c.name(), out, ix -> as(new Binary(BinaryOp.DIV, sum.at(ix), as(count.at(ix).max(new IntImm(1, DType.INT32)), DType.FLOAT64)), t)));
    }

    private static List<Compute> globalPool(OpCall c, boolean max) {
        Tensor x = c.in(0);
        GlobalPool2D.GlobalPool2DAttrs a = c.attrs(GlobalPool2D.GlobalPool2DAttrs.class);
        Layout in = a.layout(), outLayout = a.outLayout();
        DType t = x.dtype();
        int h = x.shape().get(in.indexOf('H')), w = x.shape().get(in.indexOf('W'));
        IterVar ry = Te.reduceAxis("ry", h), rx = Te.reduceAxis("rx", w);
        java.util.function.Function<List<Var>, PrimExpr> element = ix -> x.at(NchwIndex.of(outLayout, ix).at(in, ry.var(), rx.var()));
        if (max) {
            if (t.isBool()) throw c.fail("bool pooling is not supported");
            return List.of(Te.compute(c.name(), c.outShape(), ix -> new Reduce(Combiner.MAX, element.apply(ix), List.of(ry, rx), lowest(t))));
        }
        if (!t.isFloat()) throw c.fail("average pooling needs a float tensor, got " + t);
        Compute sum = Te.compute(c.name() + "_sum", c.outShape(), ix -> Te.sum(as(element.apply(ix), DType.FLOAT64), ry, rx));
        return List.of(Te.compute(c.name(), c.outShape(), ix -> as(new Binary(BinaryOp.DIV, sum.at(ix), new FloatImm((double) h * w, DType.FLOAT64)), t)));
    }
}
