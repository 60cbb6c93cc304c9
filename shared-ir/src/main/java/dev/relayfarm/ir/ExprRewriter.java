package dev.relayfarm.ir;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;

/**
 * The one rewriting base: visits nodes in post-order (iteratively, see {@link ExprTraversal}),
 * memoized by identity so shared sub-expressions are rewritten once and stay shared, and rebuilds a
 * node only when one of its children changed (copy-on-write: "nothing changed" is {@code result ==
 * input}). Subclasses override {@link #rewrite(Expr, Expr)}, which receives the original node and the
 * node rebuilt over already-rewritten children, and never recurse themselves.
 *
 * <p>Binders (let variables, parameters, pattern variables) are kept as they are; a rewriter that
 * maps a {@link Var} use to another expression must keep scoping right itself.
 */
public abstract class ExprRewriter {
    private final IdentityHashMap<Expr, Expr> memo = new IdentityHashMap<>();

    /** Rewrites {@code root} and everything under it. */
    public Expr rewrite(Expr root) {
        Expr done = memo.get(root);
        if (done != null) return done;
        for (Expr node : ExprTraversal.postOrder(root)) {
            if (memo.containsKey(node)) continue;
            memo.put(node, rewrite(node, withChildren(node, this::rewritten)));
        }
        return memo.get(root);
    }

    /** The hook: {@code pre} is the original node, {@code post} the node over rewritten children. */
    protected Expr rewrite(Expr pre, Expr post) {
        return post;
    }

    private Expr rewritten(Expr e) {
        Expr r = memo.get(e);
        if (r == null) throw new IllegalStateException("child visited after parent: " + e);
        return r;
    }

    /**
     * {@code node} with each child replaced by {@code map(child)}; the same object when no child
     * changed.
     */
    public static Expr withChildren(Expr node, java.util.function.Function<Expr, Expr> map) {
        return switch (node) {
            case Var v -> v;
            case GlobalVar g -> g;
            case Constant c -> c;
            case Op o -> o;
            case Constructor c -> c;
            case Tuple t -> {
                List<Expr> fields = mapAll(t.fields(), map);
                yield fields == t.fields() ? t : new Tuple(fields, t.span());
            }
            case TupleGetItem t -> {
                Expr tuple = map.apply(t.tuple());
                yield tuple == t.tuple() ? t : new TupleGetItem(tuple, t.index(), t.span());
            }
            case Let l -> {
                Expr value = map.apply(l.value());
                Expr body = map.apply(l.body());
                yield value == l.value() && body == l.body() ? l : new Let(l.var(), value, body, l.span());
            }
            case If i -> {
                Expr c = map.apply(i.cond());
                Expr t = map.apply(i.thenBranch());
                Expr e = map.apply(i.elseBranch());
                yield c == i.cond() && t == i.thenBranch() && e == i.elseBranch() ? i : new If(c, t, e, i.span());
            }
            case Function f -> f.withBody(map.apply(f.body()));
            case Call c -> {
                Expr callee = map.apply(c.callee());
                List<Expr> args = mapAll(c.args(), map);
                yield callee == c.callee() && args == c.args() ? c : new Call(callee, args, c.attrs(), c.typeArgs(), c.span());
            }
            case Match m -> {
                Expr data = map.apply(m.data());
                boolean changed = data != m.data();
                List<Clause> clauses = new ArrayList<>(m.clauses().size());
                for (Clause cl : m.clauses()) {
                    Expr body = map.apply(cl.body());
                    changed |= body != cl.body();
                    clauses.add(body == cl.body() ? cl : new Clause(cl.pattern(), body));
                }
                yield changed ? new Match(data, clauses, m.complete(), m.span()) : m;
            }
            case RefCreate r -> {
                Expr v = map.apply(r.value());
                yield v == r.value() ? r : new RefCreate(v, r.span());
            }
            case RefRead r -> {
                Expr v = map.apply(r.ref());
                yield v == r.ref() ? r : new RefRead(v, r.span());
            }
            case RefWrite r -> {
                Expr ref = map.apply(r.ref());
                Expr v = map.apply(r.value());
                yield ref == r.ref() && v == r.value() ? r : new RefWrite(ref, v, r.span());
            }
        };
    }

    private static List<Expr> mapAll(List<Expr> in, java.util.function.Function<Expr, Expr> map) {
        List<Expr> out = null;
        for (int i = 0; i < in.size(); i++) {
            Expr e = in.get(i);
            Expr r = map.apply(e);
            if (r != e && out == null) {
                out = new ArrayList<>(in.subList(0, i));
            }
            if (out != null) out.add(r);
        }
        return out == null ? in : out;
    }
}
