package dev.relayfarm.interp;

import dev.relayfarm.ir.Constructor;
import java.util.List;

/** A value of an algebraic data type: the constructor that built it and its fields. */
public record ConstructorValue(Constructor constructor, List<Value> fields) implements Value {
    public ConstructorValue {
        fields = List.copyOf(fields);
    }
}
