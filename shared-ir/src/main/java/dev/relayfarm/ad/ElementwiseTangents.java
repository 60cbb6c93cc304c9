package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.call;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;

/**
 * Tangents of the elementwise and broadcasting operators. A rule combines the tangents with the same broadcasting
 * operators as the primal, so a broadcast input's tangent is broadcast with it and every result has the output's shape.
 */
final class ElementwiseTangents {
    private ElementwiseTangents() {}

    static void register(RuleTable.Registrar<OpTangent> r) {
        r.rule("add", (c, t) -> call("add", t.get(0), t.get(1)));
        r.rule("subtract", (c, t) -> call("subtract", t.get(0), t.get(1)));
        // d(ab) = da b + a db
        r.rule("multiply", (c, t) -> call("add", call("multiply", t.get(0), c.arg(1)), call("multiply", c.arg(0), t.get(1))));
        // d(a/b) = (da - (a/b) db) / b
        r.rule("divide", (c, t) -> call("divide", call("subtract", t.get(0), call("multiply", c.out(), t.get(1))), c.arg(1)));
        r.rule("negative", (c, t) -> call("negative", t.get(0)));
        r.rule("exp", (c, t) -> call("multiply", t.get(0), c.out()));
        r.rule("log", (c, t) -> call("divide", t.get(0), c.arg(0)));
        r.rule("tanh", (c, t) -> call("multiply", t.get(0), call("subtract", one(c), call("multiply", c.out(), c.out()))));
        r.rule("sigmoid", (c, t) -> call("multiply", t.get(0), call("multiply", c.out(), call("subtract", one(c), c.out()))));
        // d sqrt(a) = da / (2 sqrt(a))
        r.rule("sqrt", (c, t) -> call("divide", t.get(0), call("multiply", Grads.scalar(2, dtype(c)), c.out())));
        // d a^b = b a^(b-1) da + a^b log(a) db; the second term exists only for a > 0 and is taken as 0 elsewhere (as the
        // reverse rule does), so a negative base with a constant exponent has a finite tangent
        r.rule("power", (c, t) -> call("add",
                call("multiply", call("multiply", c.arg(1), call("power", c.arg(0), call("subtract", c.arg(1), one(c)))), t.get(0)),
                call("multiply", call("multiply", c.out(),
                        call("where", call("greater", c.arg(0), Grads.scalar(0, dtype(c))), call("log", c.arg(0)), call("zeros_like", c.arg(0)))), t.get(1))));
        // the tangent of the argument that is selected (the first on a tie, as the result is)
        r.rule("maximum", (c, t) -> call("where", call("greater_equal", c.arg(0), c.arg(1)), t.get(0), t.get(1)));
        r.rule("minimum", (c, t) -> call("where", call("less_equal", c.arg(0), c.arg(1)), t.get(0), t.get(1)));
        r.rule("where", (c, t) -> call("where", c.arg(0), t.get(1), t.get(2)));
        r.constant("equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "zeros_like", "ones_like");
    }

    private static DType dtype(GradientCall c) {
        return c.outTensorType().dtype();
    }

    private static Expr one(GradientCall c) {
        return Grads.scalar(1, dtype(c));
    }
}
