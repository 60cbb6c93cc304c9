package dev.relayfarm.interp;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Var;
import java.util.IdentityHashMap;
import java.util.Optional;
import java.util.Set;

/**
 * One activation frame of the interpreter: the variables bound while evaluating one function body
 * (its parameters, lets and pattern variables), a link to the environment the function was created
 * in, and the memo of the body's shared sub-expressions.
 *
 * <p>Variables are keyed by identity, so shadowing ({@code let %x = ...; let %x = ...}, two distinct
 * {@link Var}s) needs no scoping structure: one mutable map per frame is enough, and a 100,000-let
 * chain is one map, not a 100,000-deep chain of links. Lookup walks the frames of enclosing
 * <em>functions</em> only, so its cost is the lexical nesting depth, never the call depth.
 */
public final class Environment {
    private final Environment parent;
    private final IdentityHashMap<Var, Value> vars;
    /** Nodes of this frame's body referenced more than once (see {@link SharedNodes}); empty when none. */
    private final Set<Expr> shared;
    private IdentityHashMap<Expr, Value> memo;

    Environment(Environment parent, SharedNodes.BodyInfo body, int params) {
        this.parent = parent;
        this.shared = body.shared();
        this.vars = new IdentityHashMap<>(Math.max(params + body.binders(), 2));
    }

    /** The value of {@code var} here or in an enclosing environment. */
    public Optional<Value> lookup(Var var) {
        return Optional.ofNullable(find(var));
    }

    Value find(Var var) {
        for (Environment e = this; e != null; e = e.parent) {
            Value v = e.vars.get(var);
            if (v != null) return v;
        }
        return null;
    }

    void bind(Var var, Value value) {
        vars.put(var, value);
    }

    boolean isShared(Expr e) {
        return !shared.isEmpty() && shared.contains(e);
    }

    Value memoized(Expr e) {
        return memo == null ? null : memo.get(e);
    }

    void memoize(Expr e, Value v) {
        if (memo == null) memo = new IdentityHashMap<>();
        memo.put(e, v);
    }
}
