package dev.relayfarm.compile;

import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;

/**
 * Compiled artifacts hold fixed-size numeric buffers only: a tensor of {@code string} elements (ONNX's string
 * operators, LabelEncoder over strings) runs in the interpreter, and compiling it is refused with one message.
 */
final class StringTensors {
    private StringTensors() {}

    static String refusal(String detail) {
        return "string tensors are not supported by compiled artifacts: " + detail + " (run the model in the interpreter)";
    }

    /** True when {@code t} is or contains (in tuples) a tensor of strings. */
    static boolean contains(Type t) {
        return switch (t) {
            case TensorType tt -> tt.dtype().isString();
            case TupleType tt -> tt.fields().stream().anyMatch(StringTensors::contains);
            case null, default -> false;
        };
    }
}
