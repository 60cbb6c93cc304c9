package dev.relayfarm.ir;

/**
 * Relay types. Types are small immutable values and compare structurally with record equality,
 * except {@link TypeVar} and {@link IncompleteType}, which carry a unique id so that two distinct
 * variables that share a name are never confused. Alpha-equivalence of type parameters is
 * {@link StructuralEquality}'s job.
 */
public sealed interface Type
        permits TensorType, TupleType, FuncType, TypeVar, GlobalTypeVar, TypeCall, RefType, IncompleteType {

    /** Prints as TVM does, e.g. {@code Tensor[(10, 4), float32]}, {@code fn (float32) -> float32}. */
    @Override
    String toString();
}
