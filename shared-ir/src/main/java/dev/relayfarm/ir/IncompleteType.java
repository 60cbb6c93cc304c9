package dev.relayfarm.ir;

import java.util.concurrent.atomic.AtomicLong;

/** A type not yet known: a hole that type inference fills (written {@code _} in text). */
public record IncompleteType(TypeKind kind, long id) implements Type {
    private static final AtomicLong NEXT = new AtomicLong();

    public static IncompleteType fresh() {
        return new IncompleteType(TypeKind.TYPE, NEXT.incrementAndGet());
    }

    @Override
    public String toString() {
        return "_";
    }
}
