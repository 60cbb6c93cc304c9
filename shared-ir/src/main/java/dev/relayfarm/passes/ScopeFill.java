package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Clause;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Constructor;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprRewriter;
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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The engine of the let-introducing normal forms ({@link ToANormalForm}, {@link ToBasicBlockNormalForm}),
 * TVM's scope-dependence approach: every {@code if} branch, {@code match} clause and function body
 * is a <em>scope</em> (a basic block); a node's scope is the lowest common ancestor of the scopes of
 * all its uses, so a let binding placed there dominates every use and never escapes a branch it
 * was not needed outside. A node is <em>lifted</em> when that ancestor differs from the scope of one
 * of its uses (it is shared across blocks).
 *
 * <p>Then one walk in evaluation order converts each node and, when the {@link Rule} says so,
 * appends {@code let %v = node} to its scope's binding list; when a scope's walk is done its list
 * wraps its result. Bindings therefore appear in evaluation order, effects included. Existing lets
 * keep their variables (a node that is only the value of a let is bound by that let, not twice) and
 * are reused as objects when nothing in them changed. Primitive functions are kernels: their bodies
 * are not entered.
 *
 * <p>Iterative throughout (explicit stacks): 100,000-node chains are fine.
 */
final class ScopeFill {
    /** Which nodes get their own let binding. */
    interface Rule {
        boolean bind(Expr node, boolean lifted, boolean tail);
    }

    private static final class Scope {
        final Scope parent;
        final int depth;

        Scope(Scope parent) {
            this.parent = parent;
            this.depth = parent == null ? 0 : parent.depth + 1;
        }
    }

    /** A pending binding: its variable, value, and the let it came from (null for a new one). */
    private record Binding(Var var, Expr value, Let original) {}

    private final Rule rule;
    private final IdentityHashMap<Expr, Scope> scopeOf = new IdentityHashMap<>();
    private final Set<Expr> lifted = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<Expr> tails = Collections.newSetFromMap(new IdentityHashMap<>());
    private final IdentityHashMap<Expr, Integer> uses = new IdentityHashMap<>();
    /** The sub-scopes a node opens, per child slot (If: then/else, Match: clauses, Function: body). */
    private final IdentityHashMap<Expr, Scope[]> opened = new IdentityHashMap<>();
    private final IdentityHashMap<Scope, List<Binding>> bindings = new IdentityHashMap<>();
    private final IdentityHashMap<Expr, Expr> result = new IdentityHashMap<>();

    private ScopeFill(Rule rule) {
        this.rule = rule;
    }

    /** {@code fn} with its body (and nested non-primitive function bodies) filled by {@code rule}. */
    static Function fill(Function fn, Rule rule) {
        return new ScopeFill(rule).run(fn);
    }

    static boolean atomic(Expr e) {
        return e instanceof Var || e instanceof GlobalVar || e instanceof Constant || e instanceof Op || e instanceof Constructor;
    }

    private Function run(Function fn) {
        Scope root = new Scope(null);
        analyse(fn.body(), root);
        convert(fn.body());
        return fn.withBody(close(root, result.get(fn.body())));
    }

    // ------------------------------------------------------------------ analysis

    private void analyse(Expr body, Scope root) {
        List<Expr> order = ExprTraversal.postOrder(body, Blocks::children);
        scopeOf.put(body, root);
        markTail(body);
        IdentityHashMap<Expr, Scope> firstEdge = new IdentityHashMap<>();
        // Reverse post-order puts every parent before its children: a node's scope is final when reached.
        for (int k = order.size() - 1; k >= 0; k--) {
            Expr p = order.get(k);
            Scope ps = scopeOf.get(p);
            List<Expr> children = Blocks.children(p);
            Scope[] sub = opensScopes(p, ps);
            for (int i = 0; i < children.size(); i++) {
                Expr c = children.get(i);
                uses.merge(c, 1, Integer::sum);
                Scope edge = sub == null || sub[i] == null ? ps : sub[i];
                if (sub != null && sub[i] != null) markTail(c);
                Scope first = firstEdge.putIfAbsent(c, edge);
                if (first == null) {
                    scopeOf.put(c, edge);
                } else {
                    if (first != edge) lifted.add(c);
                    scopeOf.put(c, lca(scopeOf.get(c), edge));
                }
            }
        }
    }

    /** The scopes a node's children live in, by child slot; null entries share the parent's scope. */
    private Scope[] opensScopes(Expr p, Scope ps) {
        Scope[] sub = switch (p) {
            case If i -> new Scope[] {null, new Scope(ps), new Scope(ps)};
            case Match m -> {
                Scope[] s = new Scope[m.clauses().size() + 1];
                for (int i = 1; i < s.length; i++) s[i] = new Scope(ps);
                yield s;
            }
            case Function f -> f.isPrimitive() ? null : new Scope[] {new Scope(ps)};
            // every other kind evaluates its children in the parent's scope; named so a new kind must decide
            case Var _, GlobalVar _, Constant _, Tuple _, TupleGetItem _, Let _, Call _, Op _, Constructor _, RefCreate _, RefRead _,
                 RefWrite _ -> null;
        };
        if (sub != null) opened.put(p, sub);
        return sub;
    }

    /** The root of a scope and, through let bodies, the expression it ends with: evaluated last. */
    private void markTail(Expr scopeRoot) {
        Expr e = scopeRoot;
        while (e instanceof Let l) e = l.body();
        tails.add(e);
    }

    private static Scope lca(Scope a, Scope b) {
        while (a.depth > b.depth) a = a.parent;
        while (b.depth > a.depth) b = b.parent;
        while (a != b) {
            a = a.parent;
            b = b.parent;
        }
        return a;
    }

    // ------------------------------------------------------------------ filling

    private boolean bound(Expr n) {
        if (atomic(n) || n instanceof Let) return false;
        if (uses.getOrDefault(n, 0) == 1 && isOnlyLetValue(n)) return false; // the let binds it
        return rule.bind(n, lifted.contains(n), tails.contains(n) && !lifted.contains(n));
    }

    private final IdentityHashMap<Expr, Let> letOfValue = new IdentityHashMap<>();

    private boolean isOnlyLetValue(Expr n) {
        Let l = letOfValue.get(n);
        return l != null && l.body() != n;
    }

    private List<Binding> list(Scope s) {
        return bindings.computeIfAbsent(s, k -> new ArrayList<>());
    }

    /** Evaluation-order walk: children in order, a let's binding recorded between its value and body. */
    private void convert(Expr root) {
        for (Expr e : ExprTraversal.postOrder(root, Blocks::children)) {
            if (e instanceof Let l) letOfValue.put(l.value(), l);
        }
        ArrayDeque<Expr> nodes = new ArrayDeque<>();
        ArrayDeque<int[]> next = new ArrayDeque<>();
        nodes.push(root);
        next.push(new int[] {0});
        while (!nodes.isEmpty()) {
            Expr n = nodes.peek();
            List<Expr> children = Blocks.children(n);
            int[] i = next.peek();
            if (i[0] < children.size()) {
                if (n instanceof Let l && i[0] == 1) {
                    list(scopeOf.get(l)).add(new Binding(l.var(), result.get(l.value()), l));
                }
                Expr child = children.get(i[0]++);
                if (!result.containsKey(child)) {
                    result.put(child, null); // in progress; a DAG has no cycles, so never read early
                    nodes.push(child);
                    next.push(new int[] {0});
                }
            } else {
                nodes.pop();
                next.pop();
                result.put(n, finish(n));
            }
        }
    }

    private Expr finish(Expr n) {
        if (atomic(n)) return n;
        if (n instanceof Let l) return result.get(l.body());
        Expr rebuilt = rebuild(n);
        if (!bound(n)) return rebuilt;
        Var v = Var.fresh("x");
        list(scopeOf.get(n)).add(new Binding(v, rebuilt, null));
        return v;
    }

    private Expr rebuild(Expr n) {
        Scope[] sub = opened.get(n);
        return switch (n) {
            case If i -> {
                Expr c = result.get(i.cond());
                Expr t = close(sub[1], result.get(i.thenBranch()));
                Expr e = close(sub[2], result.get(i.elseBranch()));
                yield c == i.cond() && t == i.thenBranch() && e == i.elseBranch() ? i : new If(c, t, e, i.span());
            }
            case Match m -> {
                Expr data = result.get(m.data());
                boolean changed = data != m.data();
                List<Clause> clauses = new ArrayList<>();
                for (int k = 0; k < m.clauses().size(); k++) {
                    Clause cl = m.clauses().get(k);
                    Expr body = close(sub[k + 1], result.get(cl.body()));
                    changed |= body != cl.body();
                    clauses.add(body == cl.body() ? cl : new Clause(cl.pattern(), body));
                }
                yield changed ? new Match(data, clauses, m.complete(), m.span()) : m;
            }
            case Function f -> f.isPrimitive() ? f : f.withBody(close(sub[0], result.get(f.body())));
            default -> ExprRewriter.withChildren(n, result::get);
        };
    }

    /** Wraps {@code body} in the scope's bindings, reusing a let object whose parts are unchanged. */
    private Expr close(Scope scope, Expr body) {
        List<Binding> bs = bindings.getOrDefault(scope, List.of());
        Expr out = body;
        for (int k = bs.size() - 1; k >= 0; k--) {
            Binding b = bs.get(k);
            Let o = b.original();
            out = o != null && o.value() == b.value() && o.body() == out ? o
                    : new Let(b.var(), b.value(), out, o == null ? dev.relayfarm.ir.Span.NONE : o.span());
        }
        return out;
    }
}
