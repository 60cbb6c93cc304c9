package dev.relayfarm.ir;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A type parameter ({@code A} in {@code def @id[A](%x: A) -> A}). Compared by its unique id: two
 * type variables named {@code A} in different functions are different variables.
 */
public record TypeVar(String name, TypeKind kind, long id) implements Type {
    private static final AtomicLong NEXT = new AtomicLong();

    public static TypeVar fresh(String name, TypeKind kind) {
        return new TypeVar(name, kind, NEXT.incrementAndGet());
    }

    public static TypeVar fresh(String name) {
        return fresh(name, TypeKind.TYPE);
    }

    @Override
    public String toString() {
        return name;
    }
}
