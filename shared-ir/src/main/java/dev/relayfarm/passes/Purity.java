package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
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
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Purity analysis (the first stage of TVM's dead-code elimination, shared by the normal-form
 * passes): may evaluating an expression have an effect? Effects are the reference operations
 * ({@code ref}, {@code ref_read}, {@code ref_write}: creating a cell is kept too, since its identity
 * is observable through later writes) and calls of functions that are not known to be pure. Operators
 * and constructors are pure. A call of a global, of a function literal, or of a let-bound function
 * literal is as pure as that function's body; a call of anything else (a parameter, a projection, the
 * result of another call) is assumed impure, because nothing says what it will run.
 *
 * <p>Globals are solved as a greatest fixed point (all assumed pure, then weakened until stable), so a
 * recursive global is pure when its body is pure assuming it is; a recursive local function the same
 * way. Non-termination is not an effect here (as in TVM).
 *
 * <p>{@link #local()} knows no module: every call of a global or of a let-bound function counts as
 * impure. Rewriters use it to judge nodes as they build them ({@link #isPure} on a node whose children
 * are judged is one step, so judging a whole rewrite costs linear time).
 *
 * <p>Nodes are memoized by identity; the walk is iterative ({@link ExprTraversal}).
 */
final class Purity {
    private final Map<GlobalVar, Boolean> globals = new HashMap<>();
    private final IdentityHashMap<Var, Function> letFunctions = new IdentityHashMap<>();
    private final IdentityHashMap<Expr, Boolean> pure = new IdentityHashMap<>();
    private Purity() {}

    /** An analysis without a module: calls of globals and of let-bound functions are effects. */
    static Purity local() {
        return new Purity();
    }

    /** Analyses every global function of {@code module}. */
    static Purity of(IRModule module) {
        Purity p = new Purity();
        for (Function f : module.functions().values()) {
            for (Expr e : ExprTraversal.postOrder(f)) {
                if (e instanceof Let l && l.value() instanceof Function fn) p.letFunctions.put(l.var(), fn);
            }
        }
        for (GlobalVar g : module.functions().keySet()) p.globals.put(g, true);
        boolean changed = true;
        while (changed) {
            changed = false;
            p.pure.clear();
            for (Map.Entry<GlobalVar, Function> e : module.functions().entrySet()) {
                boolean body = p.isPure(e.getValue().body());
                if (!body && p.globals.get(e.getKey())) {
                    p.globals.put(e.getKey(), false);
                    changed = true;
                }
            }
        }
        return p;
    }

    /** Evaluating {@code e} (its sub-expressions included) has no effect. */
    boolean isPure(Expr e) {
        Boolean known = pure.get(e);
        if (known != null) return known;
        if (pure.keySet().containsAll(e.children())) {
            boolean p = compute(e);
            pure.put(e, p);
            return p;
        }
        for (Expr n : ExprTraversal.postOrder(e)) {
            if (!pure.containsKey(n)) pure.put(n, compute(n));
        }
        return pure.get(e);
    }

    /** Whether {@code e} was already judged (by itself or as part of a judged expression). */
    boolean judged(Expr e) {
        return pure.containsKey(e);
    }

    /**
     * The node's own step has an effect, its sub-expressions taken as already evaluated: a reference
     * operation, a call of a possibly impure function, or an {@code if}/{@code match} whose branches
     * have effects (they run as part of that step).
     */
    boolean hasLocalEffect(Expr e) {
        return switch (e) {
            case RefCreate r -> true;
            case RefRead r -> true;
            case RefWrite r -> true;
            case Call c -> !isPure(c.callee()) || !callIsPure(c.callee());
            case If i -> !isPure(i.thenBranch()) || !isPure(i.elseBranch());
            case Match m -> m.clauses().stream().anyMatch(cl -> !isPure(cl.body()));
            case Var v -> false;
            case GlobalVar g -> false;
            case Constant c -> false;
            case Op o -> false;
            case Constructor c -> false;
            case Function f -> false;
            case Tuple t -> false;
            case TupleGetItem t -> false;
            case Let l -> false;
        };
    }

    /** Rules for one node, its children already in the memo. */
    private boolean compute(Expr n) {
        return switch (n) {
            case Var v -> true;
            case GlobalVar g -> true;
            case Constant c -> true;
            case Op o -> true;
            case Constructor c -> true;
            case Function f -> true; // making a closure runs nothing
            case RefCreate r -> false;
            case RefRead r -> false;
            case RefWrite r -> false;
            case Tuple t -> t.fields().stream().allMatch(pure::get);
            case TupleGetItem t -> pure.get(t.tuple());
            case Let l -> pure.get(l.value()) && pure.get(l.body());
            case If i -> pure.get(i.cond()) && pure.get(i.thenBranch()) && pure.get(i.elseBranch());
            case Match m -> pure.get(m.data()) && m.clauses().stream().map(Clause::body).allMatch(pure::get);
            case Call c -> pure.get(c.callee()) && c.args().stream().allMatch(pure::get) && callIsPure(c.callee());
        };
    }

    /** Calling (an already evaluated) {@code callee} has no effect. */
    private boolean callIsPure(Expr callee) {
        return switch (callee) {
            case Op o -> true;
            case Constructor c -> true;
            case GlobalVar g -> globals.getOrDefault(g, false);
            case Function f -> isPure(f.body());
            case Var v -> {
                Function f = letFunctions.get(v);
                if (f == null) yield false; // a parameter or a computed function: unknown
                // Still being analysed means v is called inside its own body: assume pure (fixed point).
                Boolean body = pure.get(f.body());
                yield body == null || body;
            }
            default -> false;
        };
    }
}
