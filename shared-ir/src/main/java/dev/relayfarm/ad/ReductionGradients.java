package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.call;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.ReductionAxes;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.List;

/** Gradients of the reductions: the adjoint is broadcast back over the reduced axes. */
final class ReductionGradients {
    private ReductionGradients() {}

    static void register(OpGradients.Registrar r) {
        r.rule("sum", (c, g) -> List.of(unreduce(c, g)));
        r.rule("mean", (c, g) -> {
            TensorType in = c.argType(0);
            long n = Grads.staticShapeProduct(in, c.op()) / Math.max(1, Grads.staticShapeProduct(c.outTensorType(), c.op()));
            return List.<Expr>of(call("divide", unreduce(c, g), Grads.scalar(n, in.dtype())));
        });
    }

    /** {@code g} (the reduction's adjoint) reshaped to keep the reduced axes as 1, then broadcast to the input. */
    static Expr unreduce(GradientCall c, Expr g) {
        TensorType in = c.argType(0);
        long[] keep = Grads.staticShape(in, c.op()).clone();
        for (int axis : reducedAxes(c)) keep[axis] = 1;
        return Grads.broadcastTo(call("reshape", Grads.attrs("newshape", keep), g), in, c.op());
    }

    /** The axes a ReduceAttrs-style operator reduces, normalized to the input's rank. */
    static int[] reducedAxes(GradientCall c) {
        ReductionAxes a = (ReductionAxes) OpRegistry.get(c.op()).parseAttrs(c.attrs());
        return a.reducedAxes(c.op(), c.argType(0).rank());
    }
}
