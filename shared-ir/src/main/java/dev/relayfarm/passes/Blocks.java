package dev.relayfarm.passes;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Match;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.List;

/**
 * Which block each node of a function body belongs to: 0 for the body itself, a fresh number for
 * each {@code if} branch, {@code match} clause and nested function body (let values and bodies stay
 * in their block). Passes that move or merge computation (fusion, combining parallel branches) use
 * it to keep work from crossing into or out of a branch or a closure. A node shared by several
 * blocks belongs to the first one reached in evaluation order (an {@code if} condition before its
 * branches). Bodies of {@code Primitive} functions are not entered. Iterative.
 */
final class Blocks {
    private Blocks() {}

    static IdentityHashMap<Expr, Integer> of(Expr body) {
        IdentityHashMap<Expr, Integer> block = new IdentityHashMap<>();
        int nextBlock = 1;
        ArrayDeque<Expr> work = new ArrayDeque<>();
        ArrayDeque<Integer> workBlock = new ArrayDeque<>();
        work.push(body);
        workBlock.push(0);
        while (!work.isEmpty()) {
            Expr e = work.pop();
            int b = workBlock.pop();
            if (block.putIfAbsent(e, b) != null) continue;
            List<Expr> cs = children(e);
            // Pushed last-first so the walk takes them in evaluation order.
            for (int k = cs.size() - 1; k >= 0; k--) {
                boolean opens = switch (e) {
                    case If x -> k > 0;
                    case Match x -> k > 0;
                    case Function x -> true;
                    default -> false;
                };
                work.push(cs.get(k));
                workBlock.push(opens ? nextBlock++ : b);
            }
        }
        return block;
    }

    /** Children as these passes see them: a Primitive function is a leaf. */
    static List<Expr> children(Expr e) {
        return e instanceof Function f && f.isPrimitive() ? List.of() : e.children();
    }
}
