package dev.relayfarm.ad;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Var;
import java.util.List;

/**
 * Tangents of the operators linear in their tensor inputs (reductions by sum and mean, and the shape transforms):
 * the tangent is the same operator, with the same attributes, applied to the tangents. {@code concatenate}'s
 * tuple argument has a tuple of tangents, which it concatenates as it does the values.
 */
final class ShapeTangents {
    private ShapeTangents() {}

    static void register(RuleTable.Registrar<OpTangent> r) {
        for (String op : new String[] {"sum", "mean", "reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "concatenate"}) {
            r.rule(op, ShapeTangents::linear);
        }
    }

    /** {@code op(dx..., attrs)}: the JVP of an operator linear in all its arguments. */
    static Expr linear(GradientCall c, List<Var> tangents) {
        return Grads.call(c.op(), c.attrs(), tangents.toArray(new Var[0]));
    }
}
