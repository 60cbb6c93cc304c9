package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.nn.BatchMatmul;
import dev.relayfarm.ops.nn.Matmul;
import java.util.ArrayList;
import java.util.List;

/**
 * Compute rules of the matrix products: dense/matmul/batch_matmul, and {@code nn.dropout}
 * (inference: the identity and a mask of ones); convolutions are {@link ConvComputes}', pooling
 * {@link PoolComputes}', normalizations {@link NormComputes}'. Products accumulate in the output
 * dtype (float32 for float32; the interpreter accumulates float32 GEMMs in float too). Float32
 * {@code nn.dense} reuses {@link Dense}.
 */
final class NnComputes {
    private NnComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("nn.dense", NnComputes::dense);
        r.add("nn.matmul", NnComputes::matmul);
        r.add("nn.batch_matmul", NnComputes::batchMatmul);
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

}
