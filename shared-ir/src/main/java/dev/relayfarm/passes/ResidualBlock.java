package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.Match;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One scope of residual code being built by {@link PartialEvaluator}: the let bindings emitted so
 * far, in evaluation order (A-normal form: each value's operands are atoms, except the nested
 * scopes of functions, branches and clauses), closed into a let chain once the scope's result is
 * known. Closing removes dead bindings, which is the partial evaluator's own small dead-code
 * elimination (the residual code is full of them: every static value that never reached residual
 * code leaves its computation's binding unused).
 *
 * <p>Rules of the elimination, applied in one backward sweep repeated until nothing changes:
 * <ol>
 *   <li>A binding whose variable is used later and every binding with an effect is kept; an unused
 *       pure binding is dropped (operator and constructor calls, tuples, projections, functions,
 *       {@code ref(...)} and {@code ref_read}; calls of anything else and {@code ref_write} have
 *       effects, and so has a branch or match containing one, or a {@code match?} that may fail).
 *   <li>A reference created in this scope whose every remaining use is as the target of a
 *       {@code ref_write} in this scope is never read and never escapes: those writes are dropped
 *       too (then rule 1 drops its {@code ref(...)}).
 *   <li>A last binding that is the scope's result becomes the result ({@code let %x = e; %x} is
 *       {@code e}) unless it is a recursive function.
 * </ol>
 */
final class ResidualBlock {
    private final List<Var> vars = new ArrayList<>();
    private final List<Expr> values = new ArrayList<>();
    private boolean open = true;

    /** Binds {@code value} to a fresh variable at the end of this scope and returns the variable. */
    Var emit(Expr value) {
        return emit(Var.fresh("x"), value);
    }

    /** Binds {@code value} to {@code var} (a fresh variable) at the end of this scope. */
    Var emit(Var var, Expr value) {
        if (!open) throw new IllegalStateException("emit into a closed residual scope");
        vars.add(var);
        values.add(value);
        return var;
    }

    /** Whether code can still be added here (atoms bound here are in scope of what is emitted now). */
    boolean isOpen() {
        return open;
    }

    /** The scope as one expression ending in {@code result}; the scope is closed afterwards. */
    Expr close(Expr result) {
        open = false;
        int n = vars.size();
        List<List<Var>> occurrences = new ArrayList<>(n);
        boolean[] effect = new boolean[n];
        for (int i = 0; i < n; i++) {
            occurrences.add(occurrences(values.get(i)));
            effect[i] = hasEffect(values.get(i));
        }
        Set<Var> writeOnly = Collections.newSetFromMap(new IdentityHashMap<>());
        boolean[] kept;
        while (true) {
            kept = sweep(result, occurrences, effect, writeOnly);
            if (!growWriteOnly(result, occurrences, kept, writeOnly)) break;
        }
        int last = n - 1;
        while (last >= 0 && !kept[last]) last--;
        Expr body = result;
        if (last >= 0 && result == vars.get(last) && !occurrences.get(last).contains(vars.get(last))) {
            body = values.get(last);
            kept[last] = false;
        }
        for (int i = n - 1; i >= 0; i--) {
            if (kept[i]) body = new Let(vars.get(i), values.get(i), body);
        }
        return body;
    }

    /** Rule 1 (and the writes of rule 2): one backward sweep counting uses of kept bindings only. */
    private boolean[] sweep(Expr result, List<List<Var>> occurrences, boolean[] effect, Set<Var> writeOnly) {
        int n = vars.size();
        boolean[] kept = new boolean[n];
        Map<Var, Integer> uses = new IdentityHashMap<>();
        if (result instanceof Var v) uses.merge(v, 1, Integer::sum);
        for (int i = n - 1; i >= 0; i--) {
            boolean droppableWrite = values.get(i) instanceof RefWrite w && w.ref() instanceof Var r && writeOnly.contains(r);
            kept[i] = uses.containsKey(vars.get(i)) || (effect[i] && !droppableWrite);
            if (kept[i]) for (Var v : occurrences.get(i)) uses.merge(v, 1, Integer::sum);
        }
        return kept;
    }

    /** Rule 2: adds the references whose kept uses are all write targets; true when any was added. */
    private boolean growWriteOnly(Expr result, List<List<Var>> occurrences, boolean[] kept, Set<Var> writeOnly) {
        Map<Var, Integer> all = new IdentityHashMap<>();
        Map<Var, Integer> writes = new IdentityHashMap<>();
        if (result instanceof Var v) all.merge(v, 1, Integer::sum);
        for (int i = 0; i < vars.size(); i++) {
            if (!kept[i]) continue;
            for (Var v : occurrences.get(i)) all.merge(v, 1, Integer::sum);
            if (values.get(i) instanceof RefWrite w && w.ref() instanceof Var r) writes.merge(r, 1, Integer::sum);
        }
        boolean grew = false;
        for (int i = 0; i < vars.size(); i++) {
            Var r = vars.get(i);
            if (kept[i] && values.get(i) instanceof RefCreate && !writeOnly.contains(r)
                    && writes.getOrDefault(r, 0).equals(all.getOrDefault(r, 0)) && writes.containsKey(r)) {
                writeOnly.add(r);
                grew = true;
            }
        }
        return grew;
    }

    /** Every use of a variable in {@code e}, with repetitions (binders are not uses). */
    static List<Var> occurrences(Expr e) {
        if (e instanceof Var v) return List.of(v);
        List<Expr> children = e.children();
        boolean flat = true;
        for (Expr c : children) flat &= c.children().isEmpty();
        if (flat) {
            // Nearly every residual binding: an operation on atoms; no walk needed.
            List<Var> out = new ArrayList<>(children.size());
            for (Expr c : children) if (c instanceof Var v) out.add(v);
            return out;
        }
        List<Var> out = new ArrayList<>();
        for (Expr node : ExprTraversal.postOrder(e)) {
            for (Expr child : node.children()) if (child instanceof Var v) out.add(v);
        }
        return out;
    }

    /** Whether evaluating the residual value {@code e} may do more than compute a value. */
    static boolean hasEffect(Expr e) {
        return switch (e) {
            case Call c -> !(c.callee() instanceof Op || c.callee() instanceof Constructor) || anyEffect(c);
            case RefWrite w -> true;
            case dev.relayfarm.ir.If i -> anyEffect(i);
            case Match m -> anyEffect(m);
            case Let l -> anyEffect(l);
            default -> false;
        };
    }

    /** Walks {@code root} without entering function bodies: creating a function runs none of it. */
    private static boolean anyEffect(Expr root) {
        java.util.ArrayDeque<Expr> work = new java.util.ArrayDeque<>();
        Set<Expr> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        work.push(root);
        while (!work.isEmpty()) {
            Expr node = work.pop();
            if (node instanceof dev.relayfarm.ir.Function || !seen.add(node)) continue;
            boolean effect = switch (node) {
                case Call c -> !(c.callee() instanceof Op || c.callee() instanceof Constructor);
                case RefWrite w -> true;
                case Match m -> !m.complete();
                default -> false;
            };
            if (effect) return true;
            for (Expr child : node.children()) work.push(child);
        }
        return false;
    }
}
