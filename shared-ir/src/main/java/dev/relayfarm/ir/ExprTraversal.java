package dev.relayfarm.ir;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Walks expressions without recursing per node, so a 100,000-deep let chain or dataflow chain
 * cannot overflow the Java stack. Shared sub-expressions (a DAG) are visited once.
 */
public final class ExprTraversal {
    private ExprTraversal() {}

    /** Every node reachable from {@code root}, children before parents, each once (by identity). */
    public static List<Expr> postOrder(Expr root) {
        return postOrder(root, Expr::children);
    }

    /**
     * The same walk over the edges {@code children} gives (e.g. one that treats some nodes as leaves,
     * as passes do with fused Primitive functions).
     */
    public static List<Expr> postOrder(Expr root, java.util.function.Function<Expr, List<Expr>> children) {
        List<Expr> out = new ArrayList<>();
        Set<Expr> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        // Each frame is a node and the index of its next child to visit.
        ArrayDeque<Expr> nodes = new ArrayDeque<>();
        ArrayDeque<int[]> next = new ArrayDeque<>();
        ArrayDeque<List<Expr>> kids = new ArrayDeque<>();
        seen.add(root);
        nodes.push(root);
        next.push(new int[] {0});
        kids.push(children.apply(root));
        while (!nodes.isEmpty()) {
            List<Expr> cs = kids.peek();
            int[] i = next.peek();
            if (i[0] < cs.size()) {
                Expr child = cs.get(i[0]++);
                if (seen.add(child)) {
                    nodes.push(child);
                    next.push(new int[] {0});
                    kids.push(children.apply(child));
                }
            } else {
                out.add(nodes.pop());
                next.pop();
                kids.pop();
            }
        }
        return out;
    }

    /** Number of distinct nodes reachable from {@code root}. */
    public static int countNodes(Expr root) {
        return postOrder(root).size();
    }

    /** Number of distinct nodes in all global functions of the module. */
    public static int countNodes(IRModule module) {
        Set<Expr> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Function f : module.functions().values()) seen.addAll(postOrder(f));
        return seen.size();
    }
}
