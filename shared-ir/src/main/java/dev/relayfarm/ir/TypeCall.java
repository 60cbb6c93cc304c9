package dev.relayfarm.ir;

import java.util.List;

/** An ADT applied to type arguments: {@code List[Tensor[(2), float32]]}. */
public record TypeCall(Type func, List<Type> args) implements Type {
    public TypeCall {
        args = List.copyOf(args);
    }

    @Override
    public String toString() {
        return TypeFormat.format(this);
    }
}
