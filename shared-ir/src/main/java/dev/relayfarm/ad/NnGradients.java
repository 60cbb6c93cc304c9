package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.call;

import dev.relayfarm.ir.Expr;
import java.util.Arrays;
import java.util.List;

/** Gradients of the neural-network operators. */
final class NnGradients {
    private NnGradients() {}

    static void register(OpGradients.Registrar r) {
        // y = x W^T: dx = g W, dW = g^T x.
        r.rule("nn.dense", (c, g) -> Arrays.asList(
                call("nn.matmul", g, c.arg(1)),
                call("nn.matmul", call("transpose", g), c.arg(0))));
        r.rule("nn.bias_add", (c, g) -> {
            int rank = c.outTensorType().rank();
            int axis = (int) Grads.intAttr(c, "axis", 1);
            return List.<Expr>of(g, call("sum", Grads.attrs("axis", new long[] {axis < 0 ? axis + rank : axis}, "exclude", true), g));
        });
        r.rule("nn.relu", (c, g) -> List.<Expr>of(call("where", call("greater", c.arg(0), Grads.scalar(0, c.argType(0).dtype())), g,
                call("zeros_like", g))));
    }
}
