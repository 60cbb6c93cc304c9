package dev.relayfarm.ir;

/** {@code if (cond) { then } else { else }}; the condition is a bool scalar. */
public record If(Expr cond, Expr thenBranch, Expr elseBranch, Span span) implements Expr {
    public If(Expr cond, Expr thenBranch, Expr elseBranch) {
        this(cond, thenBranch, elseBranch, Span.NONE);
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
        return "If";
    }
}
