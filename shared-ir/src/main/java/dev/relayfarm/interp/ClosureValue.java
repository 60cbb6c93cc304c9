package dev.relayfarm.interp;

import dev.relayfarm.ir.Function;

/**
 * A function expression together with the environment it was created in. The environment is
 * captured by reference, which is what makes {@code let %f = fn (...) { ... %f ... }} recursive: the
 * let binds {@code %f} in the very environment the closure holds.
 */
public record ClosureValue(Function function, Environment env) implements Value {
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
        return "Closure(" + function.params() + ")";
    }
}
