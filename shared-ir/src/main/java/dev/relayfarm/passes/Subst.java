package dev.relayfarm.passes;

import dev.relayfarm.ir.Binders;
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
import dev.relayfarm.ir.Pattern;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.Var;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A copy of an expression with some variables replaced and every variable it binds (let
 * variables, parameters, pattern variables) renamed to a fresh one. Passes that duplicate code
 * (inlining one body at several call sites, lifting a function out of its scope) need the fresh
 * binders: a module must not bind one variable twice. Iterative ({@link ExprRewriter}).
 */
final class Subst {
    private Subst() {}

    /** {@code e} with each free variable in {@code subst} replaced and all its binders fresh. */
    static Expr copy(Expr e, Map<Var, Expr> subst) {
        Map<Var, Expr> map = new IdentityHashMap<>(subst);
        for (Expr n : ExprTraversal.postOrder(e)) Binders.forEach(n, v -> map.put(v, fresh(v)));
        return new ExprRewriter() {
            @Override
            protected Expr rewrite(Expr pre, Expr post) {
                return switch (post) {
                    case Var v -> map.getOrDefault(v, v);
                    case Let l -> new Let(renamed(l.var(), map), l.value(), l.body(), l.span());
                    case Function f -> new Function(f.params().stream().map(p -> renamed(p, map)).toList(), f.body(),
                            f.retType(), f.typeParams(), f.attrs(), f.span());
                    case Match m -> {
                        List<Clause> clauses = new ArrayList<>();
                        for (Clause cl : m.clauses()) clauses.add(new Clause(pattern(cl.pattern(), map), cl.body()));
                        yield new Match(m.data(), clauses, m.complete(), m.span());
                    }
                    case GlobalVar _, Constant _, Tuple _, TupleGetItem _, If _, Call _, Op _, Constructor _, RefCreate _, RefRead _,
                         RefWrite _ -> post;
                };
            }
        }.rewrite(e);
    }

    static Var fresh(Var v) {
        return Var.fresh(v.name(), v.annotation(), v.span());
    }

    private static Var renamed(Var v, Map<Var, Expr> map) {
        return (Var) map.get(v);
    }

    private static Pattern pattern(Pattern p, Map<Var, Expr> map) {
        return switch (p) {
            case Pattern.Wildcard w -> w;
            case Pattern.Bind b -> new Pattern.Bind(renamed(b.var(), map));
            case Pattern.Ctor c -> new Pattern.Ctor(c.constructor(), c.args().stream().map(a -> pattern(a, map)).toList());
            case Pattern.TuplePattern t -> new Pattern.TuplePattern(t.fields().stream().map(a -> pattern(a, map)).toList());
        };
    }
}
