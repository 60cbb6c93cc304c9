package dev.relayfarm.ops;

import dev.relayfarm.ir.Type;

/**
 * What a type relation may do to the solver's state while it runs: learn a type (unify) and look up
 * what is known. Errors are reported by throwing {@link RelationException}; the solver adds the
 * operator name and source position.
 */
public interface TypeReporter {
    /** Unifies {@code a} with {@code b}; e.g. assigns an output type. Throws on conflict. */
    void assign(Type a, Type b);

    /** {@code t} with every solved type variable substituted (still possibly incomplete). */
    Type resolve(Type t);
}
