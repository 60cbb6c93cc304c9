package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.call;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Var;
import java.util.List;

/**
 * Tangents of the neural-network operators. The products and the losses are bilinear, so their tangent is the
 * operator applied twice, each time with one argument replaced by its tangent; {@code nn.bias_add} is linear.
 */
final class NnTangents {
    private NnTangents() {}

    static void register(RuleTable.Registrar<OpTangent> r) {
        r.rule("nn.dense", NnTangents::bilinear);
        r.rule("nn.matmul", NnTangents::bilinear);
        r.rule("nn.bias_add", ShapeTangents::linear);
        r.rule("nn.relu", (c, t) -> call("where", call("greater", c.arg(0), Grads.scalar(0, c.argType(0).dtype())), t.get(0),
                call("zeros_like", t.get(0))));
        // y = softmax(x): dy = y * (dx - sum(y * dx)) along the axis
        r.rule("nn.softmax", (c, t) -> call("multiply", c.out(), call("subtract", t.get(0), alongAxis(c, call("multiply", c.out(), t.get(0))))));
        // y = log_softmax(x): dy = dx - sum(softmax(x) * dx) along the axis, softmax(x) = exp(y)
        r.rule("nn.log_softmax", (c, t) -> call("subtract", t.get(0), alongAxis(c, call("multiply", call("exp", c.out()), t.get(0)))));
        // -sum(log(p) t)/B: the log's tangent dp/p enters as a log-probability, so both terms are the logits form
        r.rule("nn.cross_entropy", (c, t) -> call("add",
                call("nn.cross_entropy_with_logits", call("divide", t.get(0), c.arg(0)), c.arg(1)),
                call("nn.cross_entropy_with_logits", call("log", c.arg(0)), t.get(1))));
        r.rule("nn.cross_entropy_with_logits", NnTangents::bilinear);
    }

    /** {@code op(da, b) + op(a, db)} with the call's attributes. */
    private static Expr bilinear(GradientCall c, List<Var> t) {
        return call("add", call(c.op(), c.attrs(), t.get(0), c.arg(1)), call(c.op(), c.attrs(), c.arg(0), t.get(1)));
    }

    /** {@code sum(e, axis=[softmax's axis], keepdims=True)}: broadcasts back over the axis. */
    private static Expr alongAxis(GradientCall c, Expr e) {
        return call("sum", Grads.attrs("axis", new long[] {c.<dev.relayfarm.ops.nn.Softmax.SoftmaxAttrs>parsedAttrs().axis()}, "keepdims", true), e);
    }
}
