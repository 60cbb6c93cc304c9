package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.kernel.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * One operator application handed to a compute rule: the operator's name, its input tensors (tuple
 * arguments flattened), its attributes parsed by the operator's own attrs parser (the record the
 * interpreter's kernel reads, so both sides see the same values) and its output types (a tuple result
 * flattened, one per output tensor).
 */
record OpCall(String op, List<Tensor> inputs, Object attrs, List<TensorType> outputs) {
    OpCall {
        inputs = List.copyOf(inputs);
        outputs = List.copyOf(outputs);
    }

    Tensor in(int i) {
        if (i >= inputs.size()) throw fail("expects at least " + (i + 1) + " inputs, got " + inputs.size());
        return inputs.get(i);
    }

    /** The typed attributes record; a wrong record type is a compiler bug, not a user error. */
    <A> A attrs(Class<A> type) {
        return type.cast(attrs);
    }

    TensorType outType(int i) {
        return outputs.get(i);
    }

    /** The static shape of output {@code i} (validated to be static and non-empty by {@link OpComputes}). */
    List<Integer> outShape(int i) {
        return staticShape(op, outputs.get(i));
    }

    List<Integer> outShape() {
        return outShape(0);
    }

    DType outDtype() {
        return outputs.getFirst().dtype();
    }

    /** A C-friendly stage name derived from the operator ({@code nn.conv2d} -> {@code nn_conv2d}). */
    String name() {
        return op.replace('.', '_');
    }

    UnsupportedOperationException fail(String reason) {
        return new UnsupportedOperationException(op + ": " + reason);
    }

    static List<Integer> staticShape(String op, TensorType t) {
        List<Integer> out = new ArrayList<>();
        for (Dim d : t.shape()) {
            if (!(d instanceof Dim.Int i)) throw new UnsupportedOperationException(op + ": no compute for the dynamic shape " + t + " (kernels need static shapes)");
            if (i.value() <= 0) throw new UnsupportedOperationException(op + ": no compute for the empty tensor " + t);
            out.add(Math.toIntExact(i.value()));
        }
        return out;
    }
}
