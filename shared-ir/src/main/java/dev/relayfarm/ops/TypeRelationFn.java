package dev.relayfarm.ops;

import dev.relayfarm.ir.Type;
import java.util.List;

/**
 * The meaning of a type relation, as in Relay: {@code types} holds the inputs then the outputs
 * (already resolved as far as the solver knows; any may still be an {@code IncompleteType}).
 * Returns {@code true} when the relation is fully solved, {@code false} to defer until more is known
 * (typically while an input is incomplete). Throws {@link RelationException} when the types cannot
 * satisfy it, with a message that states the constraint and the actual value, e.g.
 * {@code "axis must be in [-3, 2], got 5"}.
 *
 * @param <A> the operator's typed attributes record
 */
@FunctionalInterface
public interface TypeRelationFn<A> {
    boolean solve(List<Type> types, int numInputs, A attrs, TypeReporter reporter);
}
