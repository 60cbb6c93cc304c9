package dev.relayfarm.passes;

import dev.relayfarm.ir.Binders;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The variables an expression uses but does not bind, in order of first use (post-order), each
 * once. In a well-formed module no variable is bound twice, so "bound anywhere inside" is the same
 * as "bound around every use". Iterative.
 */
final class FreeVars {
    private FreeVars() {}

    static List<Var> of(Expr e) {
        List<Expr> nodes = ExprTraversal.postOrder(e);
        Set<Var> bound = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Expr n : nodes) Binders.forEach(n, bound::add);
        List<Var> out = new ArrayList<>();
        for (Expr n : nodes) {
            if (n instanceof Var v && !bound.contains(v)) out.add(v);
        }
        return out;
    }
}
