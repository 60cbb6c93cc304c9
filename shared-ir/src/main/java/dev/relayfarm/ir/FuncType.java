package dev.relayfarm.ir;

import java.util.List;

/**
 * {@code fn [A, B] (argTypes) -> ret}, optionally constrained by type relations (the signature of an
 * operator: {@code fn (Tensor, Tensor) -> Tensor where Broadcast(...)}).
 */
public record FuncType(List<TypeVar> typeParams, List<Type> argTypes, Type retType, List<TypeRelation> constraints)
        implements Type {
    public FuncType {
        typeParams = List.copyOf(typeParams);
        argTypes = List.copyOf(argTypes);
        constraints = List.copyOf(constraints);
    }

    public FuncType(List<Type> argTypes, Type retType) {
        this(List.of(), argTypes, retType, List.of());
    }

    @Override
    public String toString() {
        return TypeFormat.format(this);
    }
}
