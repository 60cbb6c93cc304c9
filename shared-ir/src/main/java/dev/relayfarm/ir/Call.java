package dev.relayfarm.ir;

import java.util.List;

/**
 * {@code callee(args, key=value...)}. The callee is an {@link Op}, a {@link GlobalVar}, a local
 * {@link Var}, a {@link Function}, a {@link Constructor}, or any expression of function type.
 * {@code typeArgs} are explicit type arguments (usually empty; filled by inference).
 */
public record Call(Expr callee, List<Expr> args, Attrs attrs, List<Type> typeArgs, Span span) implements Expr {
    public Call {
        args = List.copyOf(args);
        typeArgs = List.copyOf(typeArgs);
    }

    public Call(Expr callee, List<Expr> args) {
        this(callee, args, Attrs.EMPTY, List.of(), Span.NONE);
    }

    public Call(Expr callee, List<Expr> args, Attrs attrs) {
        this(callee, args, attrs, List.of(), Span.NONE);
    }

    /** Convenience for operator calls: {@code Call.op("add", a, b)}. */
    public static Call op(String name, Expr... args) {
        return new Call(Op.get(name), List.of(args));
    }

    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }

    @Override
    public String toString() {
        return "Call(" + callee + ", " + args.size() + " args)";
    }
}
