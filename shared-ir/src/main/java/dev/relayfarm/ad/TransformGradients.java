package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.call;

import dev.relayfarm.ir.Expr;
import java.util.List;

/** Gradients of the data-movement operators: each moves the adjoint back the way the data came. */
final class TransformGradients {
    private TransformGradients() {}

    static void register(OpGradients.Registrar r) {
        r.rule("reshape", (c, g) -> List.<Expr>of(call("reshape", Grads.attrs("newshape", Grads.staticShape(c.argType(0), c.op())), g)));
    }
}
