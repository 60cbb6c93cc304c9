package dev.relayfarm.interp;

import java.util.List;

/** A tuple of values; the empty tuple is unit. */
public record TupleValue(List<Value> fields) implements Value {
    public TupleValue {
        fields = List.copyOf(fields);
    }

    public Value get(int i) {
        return fields.get(i);
    }
}
