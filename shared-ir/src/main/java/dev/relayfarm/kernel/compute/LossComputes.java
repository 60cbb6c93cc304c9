package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.MathFn;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import java.util.List;

/**
 * Compute rules of the loss operators {@code nn.cross_entropy} and {@code nn.cross_entropy_with_logits}. As in the
 * interpreter's kernel, the log, the products and the sum are in double and the scalar is rounded once to the dtype:
 * a float32 loss then equals the interpreter's exactly up to the order of the additions.
 */
final class LossComputes {
    private LossComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("nn.cross_entropy", c -> crossEntropy(c, true));
        r.add("nn.cross_entropy_with_logits", c -> crossEntropy(c, false));
    }

    /** Stage 1: {@code sum over (b, k) of term(p[b, k]) * t[b, k]} in double; stage 2: its negation over the batch size, in the dtype. */
    private static List<Compute> crossEntropy(OpCall c, boolean log) {
        Tensor p = c.in(0), t = c.in(1);
        if (!p.dtype().isFloat()) throw c.fail("predictions must be a float tensor, got " + p.dtype());
        if (p.rank() != 2 || !p.shape().equals(t.shape())) throw c.fail("predictions " + p.shape() + " and targets " + t.shape() + " must be equal 2-D shapes");
        IterVar b = Te.reduceAxis("rb", p.shape().get(0)), k = Te.reduceAxis("rk", p.shape().get(1));
        Compute acc = Te.compute(c.name() + "_acc", List.of(), ix -> {
            List<PrimExpr> at = List.of(b.var(), k.var());
            PrimExpr pv = new Cast(DType.FLOAT64, p.at(at));
            if (log) pv = ElementwiseComputes.call(MathFn.LOG, pv);
            return Te.sum(new Binary(BinaryOp.MUL, pv, new Cast(DType.FLOAT64, t.at(at))), b, k);
        });
        int batch = p.shape().get(0);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> ElementwiseComputes.cast(
                new Binary(BinaryOp.DIV, new Binary(BinaryOp.SUB, Te.zero(DType.FLOAT64), acc.at(List.of())), Te.constant(DType.FLOAT64, batch)), c.outDtype())));
    }
}
