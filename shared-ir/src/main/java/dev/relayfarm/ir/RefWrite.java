package dev.relayfarm.ir;

/** {@code ref_write(ref, value)}: stores the value into the cell; evaluates to unit. */
public record RefWrite(Expr ref, Expr value, Span span) implements Expr {
    public RefWrite(Expr ref, Expr value) {
        this(ref, value, Span.NONE);
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
        return "RefWrite";
    }
}
