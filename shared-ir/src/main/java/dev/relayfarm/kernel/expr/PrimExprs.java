package dev.relayfarm.kernel.expr;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Generic traversals of scalar expressions. Expressions are shallow (index arithmetic and one op's
 * element formula), so plain recursion is fine here, unlike on Relay dataflow chains.
 */
public final class PrimExprs {
    private PrimExprs() {}

    /**
     * Rebuilds {@code e} bottom-up, giving each rebuilt node to {@code post}; a node whose children did
     * not change is passed as is (copy-on-write), so an identity {@code post} returns {@code e} itself.
     */
    public static PrimExpr map(PrimExpr e, Function<PrimExpr, PrimExpr> post) {
        PrimExpr rebuilt = switch (e) {
            case IntImm i -> i;
            case FloatImm f -> f;
            case Var v -> v;
            case Load l -> {
                List<PrimExpr> idx = mapAll(l.indices(), post);
                yield idx == l.indices() ? l : new Load(l.buffer(), idx);
            }
            case TensorLoad l -> {
                List<PrimExpr> idx = mapAll(l.indices(), post);
                yield idx == l.indices() ? l : new TensorLoad(l.tensor(), idx);
            }
            case Binary b -> {
                PrimExpr a = map(b.a(), post), c = map(b.b(), post);
                yield a == b.a() && c == b.b() ? b : new Binary(b.op(), a, c);
            }
            case Unary u -> {
                PrimExpr a = map(u.a(), post);
                yield a == u.a() ? u : new Unary(u.op(), a);
            }
            case Cast c -> {
                PrimExpr v = map(c.value(), post);
                yield v == c.value() ? c : c.withValue(v);
            }
            case BitCast c -> {
                PrimExpr v = map(c.value(), post);
                yield v == c.value() ? c : new BitCast(c.dtype(), v);
            }
            case Select s -> {
                PrimExpr c = map(s.condition(), post), t = map(s.then(), post), o = map(s.otherwise(), post);
                yield c == s.condition() && t == s.then() && o == s.otherwise() ? s : new Select(c, t, o);
            }
            case Call c -> {
                List<PrimExpr> args = mapAll(c.args(), post);
                yield args == c.args() ? c : new Call(c.fn(), args);
            }
            case Reduce r -> {
                PrimExpr src = map(r.source(), post), init = map(r.init(), post);
                yield src == r.source() && init == r.init() ? r : new Reduce(r.combiner(), src, r.axes(), init);
            }
        };
        return post.apply(rebuilt);
    }

    private static List<PrimExpr> mapAll(List<PrimExpr> in, Function<PrimExpr, PrimExpr> post) {
        List<PrimExpr> out = new ArrayList<>(in.size());
        boolean changed = false;
        for (PrimExpr x : in) {
            PrimExpr y = map(x, post);
            changed |= y != x;
            out.add(y);
        }
        return changed ? out : in;
    }

    /** Replaces variables by expressions (no capture issues: variables are unique by id). */
    public static PrimExpr substitute(PrimExpr e, Map<Var, ? extends PrimExpr> values) {
        if (values.isEmpty()) return e;
        return map(e, x -> x instanceof Var v && values.containsKey(v) ? values.get(v) : x);
    }

    /** Visits every node, children before parents. */
    public static void forEach(PrimExpr e, Consumer<PrimExpr> visit) {
        map(e, x -> {
            visit.accept(x);
            return x;
        });
    }

    public static Set<Var> freeVars(PrimExpr e) {
        Set<Var> vars = new LinkedHashSet<>();
        forEach(e, x -> {
            if (x instanceof Var v) vars.add(v);
        });
        return vars;
    }

    /** All loads in {@code e}, in evaluation order. */
    public static List<Load> loads(PrimExpr e) {
        List<Load> out = new ArrayList<>();
        forEach(e, x -> {
            if (x instanceof Load l) out.add(l);
        });
        return out;
    }
}
