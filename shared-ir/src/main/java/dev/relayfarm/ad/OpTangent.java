package dev.relayfarm.ad;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Var;
import java.util.List;

/**
 * An operator's forward-mode rule (its Jacobian-vector product): given the call, with its primal arguments and
 * result bound to variables, and one tangent per argument (bound to variables too, each of its argument's type:
 * a tuple of tangents for a tuple argument), the tangent of the result as a Relay expression of the result's
 * type. Tangents are never omitted (a constant's is zeros), so a rule needs no case for a missing one; an input
 * broadcast by the operator has its tangent broadcast by the same operator, or explicitly by the rule.
 */
@FunctionalInterface
public interface OpTangent {
    Expr jvp(GradientCall call, List<Var> tangents);
}
