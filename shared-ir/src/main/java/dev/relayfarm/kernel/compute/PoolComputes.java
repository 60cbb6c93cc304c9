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
 * ceil_mode cells), summing in float64 as the interpreter does. The adjoints {@code nn.max_pool2d_grad} and
 * {@code nn.avg_pool2d_grad} (NCHW) gather, per input element, the window adjoints that reach it.
 */
final class PoolComputes {
    private PoolComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("nn.max_pool2d", c -> pool(c, true));
        r.add("nn.avg_pool2d", c -> pool(c, false));
        r.add("nn.max_pool3d", c -> pool3d(c, true));
        r.add("nn.avg_pool3d", c -> pool3d(c, false));
        r.add("nn.max_pool2d_with_argmax", PoolComputes::maxPoolWithArgmax);
        r.add("nn.max_pool2d_grad", c -> poolGrad(c, true));
        r.add("nn.avg_pool2d_grad", c -> poolGrad(c, false));
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
        int pt = a.padding()[0], pl = a.padding()[1];
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
        Compute count = windowCount(c.name() + "_count", out, a, h, w, ix -> {
            NchwIndex o = NchwIndex.of(outLayout, ix);
            return new PrimExpr[] {o.h(), o.w()};
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
     * The divisor of each average-pool window whose origin (output row, output column) {@code origin} gives: the
     * window positions inside the input, or with count_include_pad inside input + padding (never the extra
     * ceil_mode cells).
     */
    private static Compute windowCount(String name, List<Integer> out, Pool2D.Pool2DAttrs a, int h, int w,
                                       java.util.function.Function<List<Var>, PrimExpr[]> origin) {
        int kh = a.poolSize()[0], kw = a.poolSize()[1], sh = a.strides()[0], sw = a.strides()[1], dh = a.dilation()[0], dw = a.dilation()[1];
        int pt = a.padding()[0], pl = a.padding()[1], pb = a.padding()[2], pr = a.padding()[3];
        IterVar cy = Te.reduceAxis("cy", kh), cx = Te.reduceAxis("cx", kw);
        return Te.compute(name, out, ix -> {
            PrimExpr[] o = origin.apply(ix);
            PrimExpr iy = o[0].mul(sh).sub(pt).add(cy.var().mul(dh)), ixx = o[1].mul(sw).sub(pl).add(cx.var().mul(dw));
            PrimExpr cond = a.countIncludePad()
                    ? iy.le(PrimExpr.of(h + pb - 1)).and(ixx.le(PrimExpr.of(w + pr - 1)))
                    : inRange(iy, 0, h).and(inRange(ixx, 0, w));
            return Te.sum(new Select(cond, new IntImm(1, DType.INT32), new IntImm(0, DType.INT32)), cy, cx);
        });
    }

    /** {@link #firstMaximum}'s position of a window without an input element. */
    private static final IntImm NO_POSITION = new IntImm(Long.MAX_VALUE, DType.INT64);

    private static IntImm noPosition(DType posType) {
        return posType.equals(DType.INT32) ? new IntImm(Integer.MAX_VALUE, DType.INT32) : NO_POSITION;
    }

    /**
     * The NCHW max pool of {@code x} over output shape {@code out}, and per window the smallest row-major position
     * {@code h * W + w} in the plane whose element equals the maximum (the first maximum in window order, as the
     * interpreter picks; with positive dilation window order and row-major order agree), {@link #NO_POSITION} when
     * the window holds no input element. Shared by max_pool2d_with_argmax and max_pool2d_grad.
     */
    private static Compute[] firstMaximum(String name, Tensor x, Pool2D.Pool2DAttrs a, List<Integer> out) {
        return firstMaximum(name, x, a, out, DType.INT64);
    }

    /**
     * {@link #firstMaximum} with positions of type {@code pos} (INT32 or INT64), "none" being its largest value: the
     * gradient's int32 positions halve the lanes its gather moves.
     */
    private static Compute[] firstMaximum(String name, Tensor x, Pool2D.Pool2DAttrs a, List<Integer> out, DType posType) {
        IntImm none = noPosition(posType);
        DType t = x.dtype();
        int h = x.shape().get(2), w = x.shape().get(3);
        int kh = a.poolSize()[0], kw = a.poolSize()[1], sh = a.strides()[0], sw = a.strides()[1], dh = a.dilation()[0], dw = a.dilation()[1];
        int pt = a.padding()[0], pl = a.padding()[1];
        IterVar ry = Te.reduceAxis("ry", kh), rx = Te.reduceAxis("rx", kw), py = Te.reduceAxis("py", kh), px = Te.reduceAxis("px", kw);
        Compute best = Te.compute(name + "_value", out, ix -> {
            PrimExpr iy = ix.get(2).mul(sh).sub(pt).add(ry.var().mul(dh)), ixx = ix.get(3).mul(sw).sub(pl).add(rx.var().mul(dw));
            PrimExpr v = new Select(inRange(iy, 0, h).and(inRange(ixx, 0, w)), x.at(ix.get(0), ix.get(1), iy, ixx), lowest(t));
            return new Reduce(Combiner.MAX, v, List.of(ry, rx), lowest(t));
        });
        Compute first = Te.compute(name + "_pos", out, ix -> {
            PrimExpr iy = ix.get(2).mul(sh).sub(pt).add(py.var().mul(dh)), ixx = ix.get(3).mul(sw).sub(pl).add(px.var().mul(dw));
            PrimExpr pos = as(iy, posType).mul(new IntImm(w, posType)).add(as(ixx, posType));
            // nested so the load happens only inside the input
            PrimExpr hit = new Select(new Binary(BinaryOp.EQ, x.at(ix.get(0), ix.get(1), iy, ixx), best.at(ix)), pos, none);
            return new Reduce(Combiner.MIN, new Select(inRange(iy, 0, h).and(inRange(ixx, 0, w)), hit, none), List.of(py, px), none);
        });
        return new Compute[] {best, first};
    }

    /**
     * nn.max_pool2d_grad / nn.avg_pool2d_grad (NCHW) as a gather: input element (ih, iw) sums, over the kernel
     * offsets (r, s), the adjoint of the window that reaches it with that offset, {@code oy = (ih + pad - r * dilation) / stride}
     * when that divides exactly and lies in the output. Max takes it only where (ih, iw) is the window's first
     * maximum; avg divides it by the window's divisor. Summed in float64, as the interpreter.
     */
    private static List<Compute> poolGrad(OpCall c, boolean max) {
        Tensor g = c.in(0), x = c.in(1);
        Pool2D.Pool2DAttrs a = c.attrs(Pool2D.Pool2DAttrs.class);
        DType t = x.dtype();
        if (!t.isFloat()) throw c.fail("pooling gradients need a float tensor, got " + t);
        int h = x.shape().get(2), w = x.shape().get(3), oh = g.shape().get(2), ow = g.shape().get(3);
        int kh = a.poolSize()[0], kw = a.poolSize()[1], sh = a.strides()[0], sw = a.strides()[1], dh = a.dilation()[0], dw = a.dilation()[1];
        int pt = a.padding()[0], pl = a.padding()[1];
        boolean disjoint = sh > (kh - 1) * dh && sw > (kw - 1) * dw;
        // int32 positions where the plane's do fit (always, in practice), for the direct path's gather
        DType posType = disjoint && (long) h * w < Integer.MAX_VALUE ? DType.INT32 : DType.INT64;
        Compute perWindow;
        if (max) {
            perWindow = firstMaximum(c.name(), x, a, g.shape(), posType)[1];
        } else {
            perWindow = windowCount(c.name() + "_count", g.shape(), a, h, w, ix -> new PrimExpr[] {ix.get(2), ix.get(3)});
        }
        if (disjoint) {
            // Windows that do not overlap (the usual 2x2 stride 2): at most one window reaches an input element, the one
            // at oy = (ih + pad) / stride, with offset r = ((ih + pad) mod stride) / dilation when that divides exactly
            // and r < k. One select per element instead of a k*k reduction with a division per tap.
            return List.of(Te.compute(c.name(), c.outShape(), ix -> {
                PrimExpr ty = ix.get(2).add(pt), tx = ix.get(3).add(pl);
                PrimExpr oy = ty.div(sh), ox = tx.div(sw), ry = ty.mod(sh), rx = tx.mod(sw);
                PrimExpr reaches = offsetInWindow(ry, kh, dh).and(oy.lt(oh)).and(offsetInWindow(rx, kw, dw)).and(ox.lt(ow));
                List<PrimExpr> window = List.of(ix.get(0), ix.get(1), oy, ox);
                // One term, so no float64 sum: a single division rounds the same in t as in float64 then t.
                PrimExpr adj = g.at(window);
                PrimExpr contribution = max
                        ? new Select(new Binary(BinaryOp.EQ, perWindow.at(window), as(ix.get(2), posType).mul(new IntImm(w, posType)).add(as(ix.get(3), posType))), adj, Te.zero(t))
                        : new Binary(BinaryOp.DIV, adj, as(perWindow.at(window).max(new IntImm(1, DType.INT32)), t));
                // nested so the window's loads happen only when the window exists
                return new Select(reaches, contribution, Te.zero(t));
            }));
        }
        IterVar ry = Te.reduceAxis("ry", kh), rx = Te.reduceAxis("rx", kw);
        Compute sum = Te.compute(c.name() + "_sum", c.outShape(), ix -> {
            PrimExpr ty = ix.get(2).add(pt).sub(ry.var().mul(dh)), tx = ix.get(3).add(pl).sub(rx.var().mul(dw));
            PrimExpr oy = ty.div(sh), ox = tx.div(sw);
            PrimExpr reaches = ty.ge(0).and(new Binary(BinaryOp.EQ, ty.mod(sh), PrimExpr.of(0))).and(oy.lt(oh)).and(tx.ge(0)).and(new Binary(BinaryOp.EQ, tx.mod(sw), PrimExpr.of(0))).and(ox.lt(ow));
            List<PrimExpr> window = List.of(ix.get(0), ix.get(1), oy, ox);
            PrimExpr adj = as(g.at(window), DType.FLOAT64), zero = Te.zero(DType.FLOAT64);
            PrimExpr contribution;
            if (max) {
                PrimExpr here = as(ix.get(2), DType.INT64).mul(w).add(as(ix.get(3), DType.INT64));
                contribution = new Select(new Binary(BinaryOp.EQ, perWindow.at(window), here), adj, zero);
            } else {
                contribution = new Binary(BinaryOp.DIV, adj, as(perWindow.at(window).max(new IntImm(1, DType.INT32)), DType.FLOAT64));
            }
            // nested so the window's loads happen only when the window exists
            return Te.sum(new Select(reaches, contribution, zero), ry, rx);
        });
        return List.of(Te.compute(c.name(), c.outShape(), ix -> as(sum.at(ix), t)));
    }

    /** Whether {@code offset} (in [0, stride)) is a window tap: a multiple of the dilation below {@code k} of them. */
    private static PrimExpr offsetInWindow(PrimExpr offset, int k, int dilation) {
        if (dilation == 1) return offset.lt(k);
        return new Binary(BinaryOp.EQ, offset.mod(dilation), PrimExpr.of(0)).and(offset.div(dilation).lt(k));
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
        if (x.dtype().isBool()) throw c.fail("bool pooling is not supported");
        int ch = x.shape().get(1), h = x.shape().get(2), w = x.shape().get(3);
        List<Integer> out = c.outShape();
        Compute[] bestFirst = firstMaximum(c.name(), x, at.pool(), out);
        Compute best = bestFirst[0], first = bestFirst[1];
        Compute index = Te.compute(c.name() + "_index", out, ix -> {
            PrimExpr p = first.at(ix);
            PrimExpr plane = as(ix.get(0), DType.INT64).mul(ch).add(as(ix.get(1), DType.INT64)).mul((long) h * w);
            PrimExpr inPlane = at.columnMajor() ? p.mod(w).mul(h).add(p.div(w)) : p;
            return new Select(new Binary(BinaryOp.EQ, p, NO_POSITION), new IntImm(-1, DType.INT64), plane.add(inPlane));
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
