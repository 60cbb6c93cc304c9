package dev.relayfarm.ir;

/** Projection {@code t.0}. */
public record TupleGetItem(Expr tuple, int index, Span span) implements Expr {
    public TupleGetItem(Expr tuple, int index) {
        this(tuple, index, Span.NONE);
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
        return "TupleGetItem(." + index + ")";
    }
}
