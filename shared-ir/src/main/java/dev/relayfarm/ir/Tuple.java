package dev.relayfarm.ir;

import java.util.List;

/** {@code (a, b, c)}; {@code ()} is the unit value. */
public record Tuple(List<Expr> fields, Span span) implements Expr {
    public Tuple {
        fields = List.copyOf(fields);
    }

    public Tuple(List<Expr> fields) {
        this(fields, Span.NONE);
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
        return "Tuple(" + fields.size() + " fields)";
    }
}
