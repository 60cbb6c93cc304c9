package dev.relayfarm.ir;

/** {@code ref(value)}: allocates a mutable cell holding the value. */
public record RefCreate(Expr value, Span span) implements Expr {
    public RefCreate(Expr value) {
        this(value, Span.NONE);
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
        return "RefCreate";
    }
}
