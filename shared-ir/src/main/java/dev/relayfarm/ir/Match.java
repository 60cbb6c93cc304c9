package dev.relayfarm.ir;

import java.util.List;

/**
 * {@code match (data) { clauses }}; {@code complete=false} is {@code match?}, which allows
 * non-exhaustive clauses without a warning.
 */
public record Match(Expr data, List<Clause> clauses, boolean complete, Span span) implements Expr {
    public Match {
        clauses = List.copyOf(clauses);
    }

    public Match(Expr data, List<Clause> clauses) {
        this(data, clauses, true, Span.NONE);
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
        return "Match(" + clauses.size() + " clauses)";
    }
}
