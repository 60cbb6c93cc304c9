package dev.relayfarm.ir;

import java.util.function.Consumer;

/**
 * The variables a node binds itself (its children's binders are theirs): a let's variable, a function's parameters,
 * the variables of a match's patterns. Free-variable analysis, substitution and type inference all need exactly this
 * list; the switch names every node kind without a {@code default}, so a new binding construct fails to compile here
 * instead of being silently treated as binding nothing.
 */
public final class Binders {
    private Binders() {}

    /** Each variable {@code node} binds, in binding order. */
    public static void forEach(Expr node, Consumer<Var> action) {
        switch (node) {
            case Let l -> action.accept(l.var());
            case Function f -> f.params().forEach(action);
            case Match m -> m.clauses().forEach(c -> ofPattern(c.pattern(), action));
            case Var _, GlobalVar _, Constant _, Tuple _, TupleGetItem _, If _, Call _, Op _, Constructor _, RefCreate _, RefRead _,
                 RefWrite _ -> {}
        }
    }

    /** Each variable {@code pattern} binds, left to right. */
    public static void ofPattern(Pattern pattern, Consumer<Var> action) {
        switch (pattern) {
            case Pattern.Wildcard _ -> {}
            case Pattern.Bind b -> action.accept(b.var());
            case Pattern.Ctor c -> c.args().forEach(a -> ofPattern(a, action));
            case Pattern.TuplePattern t -> t.fields().forEach(a -> ofPattern(a, action));
        }
    }
}
