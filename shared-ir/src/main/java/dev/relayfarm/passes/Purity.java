package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
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
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Which expressions can be evaluated with no effect, so that a pass may drop, merge or reorder them.
 * Conservative, local rules (no inter-procedural analysis):
 *
 * <ol>
 *   <li>{@code ref}, {@code ref_read}, {@code ref_write} are effects (a {@code ref} allocates a fresh
 *       cell: two of them are not one).
 *   <li>A call of an operator or a constructor is pure when its arguments are; every other call
 *       (global, local or literal function, closures) may run an effect, since its body is not looked at.
 *   <li>A function literal is pure (building a closure runs nothing); variables, globals, constants,
 *       operators and constructors are pure.
 *   <li>Anything else is pure when all its children are.
 * </ol>
 *
 * Nodes are judged in post-order without recursion, so 100k-node chains are fine. {@link #judge} adds
 * one node whose children are already judged (for rewriters that build nodes as they go).
 */
final class Purity {
    private final Map<Expr, Boolean> pure = new IdentityHashMap<>();

    /** Judges every node under {@code root}. */
    static Purity of(Expr root) {
        Purity p = new Purity();
        for (Expr e : ExprTraversal.postOrder(root)) p.judge(e);
        return p;
    }

    Purity() {}

    /** Whether {@code e} is pure; a node never judged counts as impure (the safe answer). */
    boolean isPure(Expr e) {
        return pure.getOrDefault(e, false);
    }

    boolean judged(Expr e) {
        return pure.containsKey(e);
    }

    /** Judges {@code e} from its own kind and its children's judgements (rules 1-4) and records it. */
    boolean judge(Expr e) {
        Boolean known = pure.get(e);
        if (known != null) return known;
        boolean p = switch (e) {
            case RefCreate r -> false;
            case RefRead r -> false;
            case RefWrite r -> false;
            case Call c -> (c.callee() instanceof Op || c.callee() instanceof Constructor) && allPure(c.args());
            case Function f -> true;
            case Var v -> true;
            case GlobalVar g -> true;
            case Constant c -> true;
            case Op o -> true;
            case Constructor c -> true;
            case Tuple t -> allPure(t.fields());
            case TupleGetItem t -> isPure(t.tuple());
            case Let l -> isPure(l.value()) && isPure(l.body());
            case If i -> isPure(i.cond()) && isPure(i.thenBranch()) && isPure(i.elseBranch());
            case Match m -> isPure(m.data()) && m.clauses().stream().map(Clause::body).allMatch(this::isPure);
        };
        pure.put(e, p);
        return p;
    }

    private boolean allPure(java.util.List<Expr> es) {
        for (Expr e : es) {
            if (!isPure(e)) return false;
        }
        return true;
    }
}
