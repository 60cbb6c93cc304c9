package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.call;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import java.util.List;

/**
 * Gradients of the loss operators. With {@code L = -sum(f(p) * t) / B} (B the batch size, {@code f = log} for
 * {@code nn.cross_entropy}, the identity for {@code nn.cross_entropy_with_logits}) and the scalar adjoint {@code g}:
 * {@code dp = -g * t * f'(p) / B} and {@code dt = -g * f(p) / B}; the scalar broadcasts over the (B, classes) inputs.
 */
final class LossGradients {
    private LossGradients() {}

    static void register(RuleTable.Registrar<OpGradient> r) {
        r.rule("nn.cross_entropy", (c, g) -> {
            Expr scale = scale(c, g);
            return List.of(call("divide", call("multiply", scale, c.arg(1)), c.arg(0)), call("multiply", scale, call("log", c.arg(0))));
        });
        r.rule("nn.cross_entropy_with_logits", (c, g) -> {
            Expr scale = scale(c, g);
            return List.of(call("multiply", scale, c.arg(1)), call("multiply", scale, c.arg(0)));
        });
    }

    /** {@code -g / B}: the factor both adjoints share. */
    static Expr scale(GradientCall c, Expr g) {
        DType dtype = c.argType(0).dtype();
        long batch = Grads.staticShape(c.argType(0), c.op())[0];
        return call("divide", call("negative", g), Grads.scalar(batch, dtype));
    }
}
