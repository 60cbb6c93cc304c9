package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.nn.Conv2DTranspose;
import dev.relayfarm.ops.nn.Conv3DTranspose;
import dev.relayfarm.ops.nn.Layout;
import java.util.List;

/**
 * Compute rules of {@code nn.conv2d} and {@code nn.conv2d_transpose} in every layout the operators
 * accept (any permutation of NCHW for data and output, of OIHW / IOHW for the weight: NHWC with HWIO,
 * ...), any groups, strides, dilations and asymmetric padding; products accumulate in the output
 * dtype. Float NCHW/OIHW conv2d with one group reuses {@link Conv2d} (its padded stage and default
 * schedule).
 * <pre>
 * conv2d:           out[n, f, y, x] = sum_{rc, ry, rx} x[n, g*cg + rc, y*sh + ry*dh - pt, x*sw + rx*dw - pl] * w[f, rc, ry, rx]
 * conv2d_transpose: out[n, o, y, x] = sum_{rc, ry, rx} x[n, g*cg + rc, (y + pt - ry*dh) / sh, ...] * w[g*cg + rc, o % og, ry, rx]
 *                   (only where the division is exact and lands inside the input)
 * </pre>
 * The transposed convolution is written as a gather over the output (each output element sums the
 * input pixels whose scatter reaches it), so it needs no atomic accumulation.
 */
final class ConvComputes {
    private ConvComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("nn.conv2d", ConvComputes::conv2d);
        r.add("nn.conv2d_transpose", ConvComputes::conv2dTranspose);
        r.add("nn.conv3d_transpose", ConvComputes::conv3dTranspose);
    }

    private static PrimExpr as(PrimExpr v, DType t) {
        return v.dtype().equals(t) ? v : new Cast(t, v);
    }

    /** The canonical-order index of an element at {@code index} in layout {@code l}. */
    private static List<PrimExpr> canonical(Layout l, List<Var> index) {
        int[] pos = l.pos();
        PrimExpr[] out = new PrimExpr[pos.length];
        for (int i = 0; i < pos.length; i++) out[i] = index.get(pos[i]);
        return List.of(out);
    }

    /** The index in layout {@code l} of the element at canonical index {@code c}. */
    private static List<PrimExpr> in(Layout l, PrimExpr... c) {
        int[] pos = l.pos();
        PrimExpr[] out = new PrimExpr[pos.length];
        for (int i = 0; i < pos.length; i++) out[pos[i]] = c[i];
        return List.of(out);
    }

    private static int[] canonicalShape(Layout l, Tensor t) {
        return l.toCanonical(t.shape().stream().mapToInt(Integer::intValue).toArray());
    }

    private static PrimExpr inside(PrimExpr v, int n) {
        return v.ge(PrimExpr.of(0)).and(v.lt(PrimExpr.of(n)));
    }

    private static List<Compute> conv2d(OpCall c) {
        Tensor x = c.in(0), w = c.in(1);
        Conv2D.Conv2DAttrs a = c.attrs(Conv2D.Conv2DAttrs.class);
        int[] p = a.padding();
        Conv2d.Params params = new Conv2d.Params(a.strides()[0], a.strides()[1], p[0], p[1], p[2], p[3], a.dilation()[0], a.dilation()[1]);
        DType t = c.outDtype();
        if (t.isBool()) throw c.fail("bool convolutions are not supported");
        boolean plain = a.dataLayout().isCanonical() && a.kernelLayout().isCanonical() && a.outLayout().isCanonical();
        if (plain && x.dtype().isFloat() && x.dtype().equals(t) && w.dtype().equals(t)) {
            return List.of(Conv2d.compute(x, w, params, a.groups()).out());
        }
        int g = a.groups();
        int[] xs = canonicalShape(a.dataLayout(), x), ws = canonicalShape(a.kernelLayout(), w);
        int cin = xs[1], h = xs[2], wd = xs[3];
        int f = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
        if (cin != cg * g || f % g != 0) throw c.fail("data channels " + cin + ", weight " + w.shape() + " and groups " + g + " do not agree");
        int fg = f / g;
        IterVar rc = Te.reduceAxis("rc", cg), ry = Te.reduceAxis("ry", kh), rx = Te.reduceAxis("rx", kw);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> o = canonical(a.outLayout(), ix);
            PrimExpr ch = o.get(1).div(fg).mul(cg).add(rc.var());
            PrimExpr iy = o.get(2).mul(params.strideH()).add(ry.var().mul(params.dilationH())).sub(params.padTop());
            PrimExpr ixx = o.get(3).mul(params.strideW()).add(rx.var().mul(params.dilationW())).sub(params.padLeft());
            PrimExpr v = new Select(inside(iy, h).and(inside(ixx, wd)), as(x.at(in(a.dataLayout(), o.get(0), ch, iy, ixx)), t), Te.zero(t));
            return Te.sum(new Binary(BinaryOp.MUL, v, as(w.at(in(a.kernelLayout(), o.get(1), rc.var(), ry.var(), rx.var())), t)), rc, ry, rx);
        }));
    }

    private static List<Compute> conv2dTranspose(OpCall c) {
        Tensor x = c.in(0), w = c.in(1);
        Conv2DTranspose.Conv2DTransposeAttrs at = c.attrs(Conv2DTranspose.Conv2DTransposeAttrs.class);
        Conv2D.Conv2DAttrs a = at.conv();
        DType t = c.outDtype();
        if (t.isBool()) throw c.fail("bool convolutions are not supported");
        int g = a.groups();
        int[] xs = canonicalShape(a.dataLayout(), x), ws = canonicalShape(a.kernelLayout(), w); // weight: I, O/g, H, W
        int cin = xs[1], h = xs[2], wd = xs[3];
        int og = ws[1], kh = ws[2], kw = ws[3];
        if (ws[0] != cin || cin % g != 0) throw c.fail("data channels " + cin + ", weight " + w.shape() + " and groups " + g + " do not agree");
        int cg = cin / g;
        int sh = a.strides()[0], sw = a.strides()[1], dh = a.dilation()[0], dw = a.dilation()[1], pt = a.padding()[0], pl = a.padding()[1];
        IterVar rc = Te.reduceAxis("rc", cg), ry = Te.reduceAxis("ry", kh), rx = Te.reduceAxis("rx", kw);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> o = canonical(a.outLayout(), ix);
            PrimExpr ic = o.get(1).div(og).mul(cg).add(rc.var());
            // ty >= 0 first: C's / and % truncate, so only non-negative numerators divide as floor
            PrimExpr ty = o.get(2).add(pt).sub(ry.var().mul(dh)), tx = o.get(3).add(pl).sub(rx.var().mul(dw));
            PrimExpr iy = sh == 1 ? ty : ty.div(sh), ixx = sw == 1 ? tx : tx.div(sw);
            PrimExpr ok = ty.ge(PrimExpr.of(0)).and(tx.ge(PrimExpr.of(0))).and(iy.lt(PrimExpr.of(h))).and(ixx.lt(PrimExpr.of(wd)));
            if (sh > 1) ok = ok.and(new Binary(BinaryOp.EQ, ty.mod(sh), PrimExpr.of(0)));
            if (sw > 1) ok = ok.and(new Binary(BinaryOp.EQ, tx.mod(sw), PrimExpr.of(0)));
            PrimExpr v = new Select(ok, as(x.at(in(a.dataLayout(), o.get(0), ic, iy, ixx)), t), Te.zero(t));
            PrimExpr wv = as(w.at(in(a.kernelLayout(), ic, o.get(1).mod(og), ry.var(), rx.var())), t);
            return Te.sum(new Binary(BinaryOp.MUL, v, wv), rc, ry, rx);
        }));
    }

    /** {@link #conv2dTranspose} with a depth axis, on NCDHW data and an IODHW weight (the only layouts the op takes). */
    private static List<Compute> conv3dTranspose(OpCall c) {
        Tensor x = c.in(0), w = c.in(1);
        Conv3DTranspose.Conv3DTransposeAttrs a = c.attrs(Conv3DTranspose.Conv3DTransposeAttrs.class);
        DType t = c.outDtype();
        if (t.isBool()) throw c.fail("bool convolutions are not supported");
        int g = a.groups(), cin = x.shape().get(1), og = w.shape().get(1);
        if (w.shape().get(0) != cin || cin % g != 0) throw c.fail("data channels " + cin + ", weight " + w.shape() + " and groups " + g + " do not agree");
        int cg = cin / g;
        IterVar rc = Te.reduceAxis("rc", cg);
        IterVar[] r = {Te.reduceAxis("rz", w.shape().get(2)), Te.reduceAxis("ry", w.shape().get(3)), Te.reduceAxis("rx", w.shape().get(4))};
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            PrimExpr ic = ix.get(1).div(og).mul(cg).add(rc.var());
            List<PrimExpr> xi = new java.util.ArrayList<>(List.of(ix.get(0), ic));
            PrimExpr ok = null;
            for (int i = 0; i < 3; i++) {
                int s = a.strides()[i];
                // the numerator is checked non-negative: C's / and % truncate, so only those divide as floor
                PrimExpr num = ix.get(2 + i).add(a.padding()[i]).sub(r[i].var().mul(a.dilation()[i]));
                PrimExpr pos = s == 1 ? num : num.div(s);
                PrimExpr axisOk = num.ge(PrimExpr.of(0)).and(pos.lt(PrimExpr.of(x.shape().get(2 + i))));
                if (s > 1) axisOk = axisOk.and(new Binary(BinaryOp.EQ, num.mod(s), PrimExpr.of(0)));
                ok = ok == null ? axisOk : ok.and(axisOk);
                xi.add(pos);
            }
            PrimExpr v = new Select(ok, as(x.at(xi), t), Te.zero(t));
            PrimExpr wv = as(w.at(ic, ix.get(1).mod(og), r[0].var(), r[1].var(), r[2].var()), t);
            return Te.sum(new Binary(BinaryOp.MUL, v, wv), rc, r[0], r[1], r[2]);
        }));
    }
}
