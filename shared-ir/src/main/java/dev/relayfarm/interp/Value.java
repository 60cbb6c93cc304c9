package dev.relayfarm.interp;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.List;

/**
 * A run-time value of the {@link Interpreter}: a tensor, a tuple, a closure, a mutable reference, an
 * ADT value, or a global function / constructor / operator used as a first-class value.
 */
public sealed interface Value
        permits TensorValue, TupleValue, ClosureValue, RefValue, ConstructorValue, FunctionRefValue {

    /** The unit value {@code ()}, the result of {@code ref_write}. */
    TupleValue UNIT = new TupleValue(List.of());

    static TensorValue tensor(NDArray data) {
        return new TensorValue(data);
    }

    static TupleValue tuple(Value... fields) {
        return new TupleValue(List.of(fields));
    }

    /** The tensor inside this value; throws naming the actual kind when it is something else. */
    default NDArray asTensor() {
        if (this instanceof TensorValue(NDArray data)) return data;
        throw new IllegalStateException("expected a tensor value, got " + describe(this));
    }

    /** A short description for error messages: a tensor prints as its type, an ADT value as its constructor. */
    static String describe(Value v) {
        return switch (v) {
            case TensorValue t -> typeOf(t.data()).toString();
            case TupleValue t -> {
                StringBuilder sb = new StringBuilder("(");
                for (int i = 0; i < t.fields().size(); i++) {
                    if (i > 0) sb.append(", ");
                    if (i == 4) {
                        sb.append("...");
                        break;
                    }
                    sb.append(describe(t.fields().get(i)));
                }
                if (t.fields().size() == 1) sb.append(',');
                yield sb.append(')').toString();
            }
            case ClosureValue c -> "closure fn" + c.function().params();
            case RefValue r -> "ref";
            case ConstructorValue c -> c.fields().isEmpty() ? c.constructor().name() : c.constructor().name() + "(...)";
            case FunctionRefValue f -> "function " + f.target();
        };
    }

    /** The static type of a tensor: its dtype and exact shape. */
    static TensorType typeOf(NDArray a) {
        int[] s = a.shape();
        long[] dims = new long[s.length];
        for (int i = 0; i < s.length; i++) dims[i] = s[i];
        return TensorType.of(a.dtype(), dims);
    }
}
