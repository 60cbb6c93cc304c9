package dev.relayfarm.ir;

/**
 * {@code let %var = value; body}. When {@code value} is a function, {@code var} is in scope inside
 * it too (recursive local functions).
 */
public record Let(Var var, Expr value, Expr body, Span span) implements Expr {
    public Let(Var var, Expr value, Expr body) {
        this(var, value, body, Span.NONE);
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
        return "Let(" + var + ")";
    }
}
