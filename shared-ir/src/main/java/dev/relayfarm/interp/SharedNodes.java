package dev.relayfarm.interp;

import dev.relayfarm.ir.Binders;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.Var;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Finds the sub-expressions of one function body that are referenced more than once (a dataflow
 * DAG: {@code %0 = conv(...)} used by two consumers is one node with two parents). The interpreter
 * memoizes exactly these per frame, so a shared node runs once per evaluation of the body, while
 * unshared intermediates are not retained (a memo of every node would keep every activation of a
 * model alive until the function returns).
 *
 * <p>The walk stops at nested {@link Function}s: their bodies run in their own frames and are
 * analysed on their own. Leaves (variables, constants, names) are never memoized; re-evaluating them
 * is cheaper than the lookup.
 */
final class SharedNodes {
    private SharedNodes() {}

    /**
     * What the interpreter needs to know about one function body before running it: its shared nodes
     * and how many variables its lets and patterns bind (to size the frame once instead of rehashing
     * a growing map along a 100,000-let chain).
     */
    record BodyInfo(Set<Expr> shared, int binders) {}

    static BodyInfo analyse(Expr body) {
        int[] binders = {0};
        Map<Expr, Integer> parents = new IdentityHashMap<>();
        Set<Expr> shared = Collections.newSetFromMap(new IdentityHashMap<>());
        ArrayDeque<Expr> work = new ArrayDeque<>();
        work.push(body);
        parents.put(body, 1);
        while (!work.isEmpty()) {
            Expr e = work.pop();
            // a nested function's parameters live in its own frame, not this body's
            if (!(e instanceof Function)) Binders.forEach(e, v -> binders[0]++);
            forEachChild(e, child -> {
                if (isLeaf(child)) return;
                Integer n = parents.merge(child, 1, Integer::sum);
                if (n == 1) work.push(child);
                else shared.add(child);
            });
        }
        return new BodyInfo(shared.isEmpty() ? Set.of() : shared, binders[0]);
    }

    private static boolean isLeaf(Expr e) {
        return e instanceof Var || e instanceof Constant || e instanceof GlobalVar || e instanceof Op || e instanceof Constructor;
    }

    private static void forEachChild(Expr e, java.util.function.Consumer<Expr> f) {
        switch (e) {
            case Var v -> {}
            case GlobalVar g -> {}
            case Constant c -> {}
            case Op o -> {}
            case Constructor c -> {}
            case Function fn -> {} // its body is another frame's business
            case Tuple t -> t.fields().forEach(f);
            case TupleGetItem t -> f.accept(t.tuple());
            case Let l -> {
                f.accept(l.value());
                f.accept(l.body());
            }
            case If i -> {
                f.accept(i.cond());
                f.accept(i.thenBranch());
                f.accept(i.elseBranch());
            }
            case Call c -> {
                f.accept(c.callee());
                c.args().forEach(f);
            }
            case Match m -> {
                f.accept(m.data());
                for (Clause cl : m.clauses()) f.accept(cl.body());
            }
            case RefCreate r -> f.accept(r.value());
            case RefRead r -> f.accept(r.ref());
            case RefWrite r -> {
                f.accept(r.ref());
                f.accept(r.value());
            }
        }
    }
}
