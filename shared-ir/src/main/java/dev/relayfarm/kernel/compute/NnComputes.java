package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.nn.BatchMatmul;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.nn.Matmul;
import java.util.ArrayList;
import java.util.List;

/**
 * Compute rules of the nn operators with a reduction inside: dense/matmul/batch_matmul, conv2d
 * (NCHW/OIHW, any groups, strides, dilations, asymmetric padding), and {@code nn.dropout}
 * (inference: the identity and a mask of ones); pooling is {@link PoolComputes}'. Products
 * accumulate in the output dtype (float32 for float32; the interpreter accumulates float32 GEMMs in
 * float too). {@code nn.dense} and group-1 float conv2d reuse {@link Dense} and {@link Conv2d}.
 *
 * <p>Not covered yet (UnsupportedOperationException naming the operator): layouts other than
 * NCHW/OIHW, {@code nn.contrib_conv2d_NCHWc}, {@code nn.conv2d_transpose}, {@code nn.batch_norm},
 * {@code nn.layer_norm} (simplify-inference removes both before lowering), {@code nn.lrn},
 * {@code image.resize2d}.
 */
final class NnComputes {
    private NnComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("nn.dense", NnComputes::dense);
        r.add("nn.matmul", NnComputes::matmul);
        r.add("nn.batch_matmul", NnComputes::batchMatmul);
        r.add("nn.conv2d", NnComputes::conv2d);
        r.add("nn.dropout", c -> {
            Tensor x = c.in(0);
            return List.of(Te.compute(c.name(), c.outShape(0), x::at),
                    Te.compute(c.name() + "_mask", c.outShape(1), ix -> ElementwiseComputes.cast(Te.constant(DType.INT64, 1), x.dtype())));
        });
    }

    private static PrimExpr as(PrimExpr v, DType t) {
        return v.dtype().equals(t) ? v : new Cast(t, v);
    }

    /** {@code out[.., i, j] = sum_k a(.., i, k) * b(.., k, j)} over the output dtype. */
    private interface Operand {
        PrimExpr at(List<PrimExpr> outIndex, PrimExpr k);
    }

    private static Compute gemm(OpCall c, Operand a, Operand b, int k) {
        DType t = c.outDtype();
        if (t.isBool()) throw c.fail("bool matrix products are not supported");
        IterVar r = Te.reduceAxis("rk", k);
        return Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> o = new ArrayList<>(ix);
            return Te.sum(new Binary(BinaryOp.MUL, as(a.at(o, r.var()), t), as(b.at(o, r.var()), t)), r);
        });
    }

    private static List<Compute> dense(OpCall c) {
        Tensor x = c.in(0), w = c.in(1);
        if (x.rank() == 2 && x.dtype().equals(DType.FLOAT32) && c.outDtype().equals(DType.FLOAT32)) {
            Compute out = Dense.compute(x, w).out();
            return List.of(out);
        }
        int rank = x.rank(), k = x.shape().getLast();
        return List.of(gemm(c, (o, rk) -> {
            List<PrimExpr> i = new ArrayList<>(o.subList(0, rank - 1));
            i.add(rk);
            return x.at(i);
        }, (o, rk) -> w.at(o.get(rank - 1), rk), k));
    }

    private static List<Compute> matmul(OpCall c) {
        Tensor a = c.in(0), b = c.in(1);
        Matmul.MatmulAttrs at = c.attrs(Matmul.MatmulAttrs.class);
        int rank = c.outShape().size();
        int k = at.transposeA() ? a.shape().getFirst() : a.shape().getLast();
        return List.of(gemm(c, (o, rk) -> {
            if (at.transposeA()) return a.at(rk, o.get(0));
            List<PrimExpr> i = new ArrayList<>(o.subList(0, a.rank() - 1));
            i.add(rk);
            return a.at(i);
        }, (o, rk) -> at.transposeB() ? b.at(o.get(rank - 1), rk) : b.at(rk, o.get(rank - 1)), k));
    }

    /** {@code [B, M, K] x [B, K, N]} (b transposed by default: {@code [B, N, K]}), batch dims broadcast. */
    private static List<Compute> batchMatmul(OpCall c) {
        Tensor a = c.in(0), b = c.in(1);
        BatchMatmul.BatchMatmulAttrs at = c.attrs(BatchMatmul.BatchMatmulAttrs.class);
        int k = at.transposeA() ? a.shape().get(1) : a.shape().get(2);
        return List.of(gemm(c, (o, rk) -> {
            PrimExpr batch = a.shape().getFirst() == 1 ? PrimExpr.of(0) : o.get(0);
            return at.transposeA() ? a.at(batch, rk, o.get(1)) : a.at(batch, o.get(1), rk);
        }, (o, rk) -> {
            PrimExpr batch = b.shape().getFirst() == 1 ? PrimExpr.of(0) : o.get(0);
            return at.transposeB() ? b.at(batch, o.get(2), rk) : b.at(batch, rk, o.get(2));
        }, k));
    }

    private static void requireLayout(OpCall c, String what, String actual, String expected) {
        if (!actual.equals(expected)) throw c.fail(what + " " + actual + " is not supported (only " + expected + ")");
    }

    private static List<Compute> conv2d(OpCall c) {
        Tensor x = c.in(0), w = c.in(1);
        Conv2D.Conv2DAttrs a = c.attrs(Conv2D.Conv2DAttrs.class);
        requireLayout(c, "data_layout", a.dataLayout().name(), "NCHW");
        requireLayout(c, "kernel_layout", a.kernelLayout().name(), "OIHW");
        requireLayout(c, "out_layout", a.outLayout().name(), "NCHW");
        int[] p = a.padding();
        Conv2d.Params params = new Conv2d.Params(a.strides()[0], a.strides()[1], p[0], p[1], p[2], p[3], a.dilation()[0], a.dilation()[1]);
        DType t = c.outDtype();
        if (a.groups() == 1 && x.dtype().isFloat() && x.dtype().equals(t) && w.dtype().equals(t)) return List.of(Conv2d.compute(x, w, params, 1).out());
        int g = a.groups();
        int cin = x.shape().get(1), h = x.shape().get(2), wd = x.shape().get(3);
        int f = w.shape().get(0), cg = w.shape().get(1), kh = w.shape().get(2), kw = w.shape().get(3);
        if (cin != cg * g || f % g != 0) throw c.fail("data channels " + cin + ", weight " + w.shape() + " and groups " + g + " do not agree");
        int fg = f / g;
        IterVar rc = Te.reduceAxis("rc", cg), ry = Te.reduceAxis("ry", kh), rx = Te.reduceAxis("rx", kw);
        return List.of(Te.compute(c.name(), c.outShape(), List.of("n", "f", "y", "x"), ix -> {
            PrimExpr ch = ix.get(1).div(fg).mul(cg).add(rc.var());
            PrimExpr iy = ix.get(2).mul(params.strideH()).add(ry.var().mul(params.dilationH())).sub(params.padTop());
            PrimExpr ixx = ix.get(3).mul(params.strideW()).add(rx.var().mul(params.dilationW())).sub(params.padLeft());
            PrimExpr inside = iy.ge(PrimExpr.of(0)).and(iy.lt(h)).and(ixx.ge(PrimExpr.of(0))).and(ixx.lt(wd));
            PrimExpr v = new Select(inside, as(x.at(ix.get(0), ch, iy, ixx), t), Te.zero(t));
            return Te.sum(new Binary(BinaryOp.MUL, v, as(w.at(ix.get(1), rc.var(), ry.var(), rx.var()), t)), rc, ry, rx);
        }));
    }
}
