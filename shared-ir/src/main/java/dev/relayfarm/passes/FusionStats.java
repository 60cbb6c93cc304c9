package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Op;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * What fusion made of a module: the number of {@code Primitive} functions (fused groups, global or
 * nested; each distinct function object counted once), the operator calls inside them, the largest
 * group (in operator calls), and the operator calls left outside any group (0 after
 * {@link FuseOps}).
 */
public record FusionStats(int groups, int fusedOps, int largestGroup, int unfusedOps) {
    public static FusionStats of(IRModule module) {
        int groups = 0;
        int fused = 0;
        int largest = 0;
        int unfused = 0;
        Set<Expr> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Function f : module.functions().values()) {
            for (Expr e : ExprTraversal.postOrder(f)) {
                if (!seen.add(e)) continue;
                if (e instanceof Function g && g.isPrimitive()) {
                    int ops = 0;
                    for (Expr x : ExprTraversal.postOrder(g.body())) if (isOpCall(x)) ops++;
                    groups++;
                    fused += ops;
                    largest = Math.max(largest, ops);
                }
            }
        }
        // Operator calls outside groups: walk again, not entering Primitive functions.
        for (Function f : module.functions().values()) {
            if (f.isPrimitive()) continue;
            unfused += countOutside(f.body());
        }
        return new FusionStats(groups, fused, largest, unfused);
    }

    private static boolean isOpCall(Expr e) {
        return e instanceof Call c && c.callee() instanceof Op;
    }

    private static int countOutside(Expr body) {
        int n = 0;
        Set<Expr> inside = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Expr e : ExprTraversal.postOrder(body)) {
            if (e instanceof Function g && g.isPrimitive()) inside.addAll(ExprTraversal.postOrder(g.body()));
        }
        for (Expr e : ExprTraversal.postOrder(body)) if (isOpCall(e) && !inside.contains(e)) n++;
        return n;
    }

    /** Average operator calls per group, 0 when there are none. */
    public double opsPerGroup() {
        return groups == 0 ? 0 : (double) fusedOps / groups;
    }
}
