package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.call;
import static dev.relayfarm.ad.Grads.collapseTo;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.TensorType;
import java.util.Arrays;
import java.util.List;

/** Gradients of the elementwise and broadcasting operators; a broadcast input gets its adjoint summed back to its shape. */
final class ElementwiseGradients {
    private ElementwiseGradients() {}

    static void register(OpGradients.Registrar r) {
        r.rule("add", (c, g) -> binary(c, g, g));
        r.rule("subtract", (c, g) -> binary(c, g, call("negative", g)));
        r.rule("multiply", (c, g) -> binary(c, call("multiply", g, c.arg(1)), call("multiply", g, c.arg(0))));
        r.rule("divide", (c, g) -> binary(c, call("divide", g, c.arg(1)),
                call("negative", call("divide", call("multiply", g, c.out()), c.arg(1)))));
        r.rule("negative", (c, g) -> List.of(call("negative", g)));
        r.rule("exp", (c, g) -> List.of(call("multiply", g, c.out())));
        r.rule("log", (c, g) -> List.of(call("divide", g, c.arg(0))));
        r.rule("tanh", (c, g) -> List.of(call("multiply", g,
                call("subtract", Grads.scalar(1, c.outTensorType().dtype()), call("multiply", c.out(), c.out())))));
        r.rule("sigmoid", (c, g) -> List.of(call("multiply", g,
                call("multiply", c.out(), call("subtract", Grads.scalar(1, c.outTensorType().dtype()), c.out())))));
        r.constant("equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "zeros_like", "ones_like");
    }

    /** The adjoints of a broadcasting binary operator, each summed back to its input's shape. */
    static List<Expr> binary(GradientCall c, Expr dLhs, Expr dRhs) {
        TensorType out = c.outTensorType();
        return Arrays.asList(collapseTo(dLhs, out, c.argType(0), c.op()), collapseTo(dRhs, out, c.argType(1), c.op()));
    }
}
