package dev.relayfarm.ir;

/** {@code ref_read(ref)}: the current value of a reference cell. */
public record RefRead(Expr ref, Span span) implements Expr {
    public RefRead(Expr ref) {
        this(ref, Span.NONE);
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
        return "RefRead";
    }
}
