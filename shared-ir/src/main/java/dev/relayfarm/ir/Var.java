package dev.relayfarm.ir;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A local variable {@code %x}. Identity semantics: a variable is the object, not its name; the name is
 * only a hint for printing, and two variables named {@code x} are different variables. The optional
 * type annotation is {@code null} when absent.
 */
public record Var(String name, Type annotation, long id, Span span) implements Expr {
    private static final AtomicLong NEXT = new AtomicLong();

    public static Var fresh(String name, Type annotation, Span span) {
        return new Var(name, annotation, NEXT.incrementAndGet(), span);
    }

    public static Var fresh(String name, Type annotation) {
        return fresh(name, annotation, Span.NONE);
    }

    public static Var fresh(String name) {
        return fresh(name, null, Span.NONE);
    }

    public boolean hasAnnotation() {
        return annotation != null;
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
        return "%" + name;
    }
}
