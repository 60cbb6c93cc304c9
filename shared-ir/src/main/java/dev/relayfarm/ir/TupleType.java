package dev.relayfarm.ir;

import java.util.List;

/** {@code (t0, t1, ...)}; the empty tuple type is unit, {@code ()}. */
public record TupleType(List<Type> fields) implements Type {
    public static final TupleType UNIT = new TupleType(List.of());

    public TupleType {
        fields = List.copyOf(fields);
    }

    @Override
    public String toString() {
        return TypeFormat.format(this);
    }
}
