package dev.relayfarm.frontend;

import dev.relayfarm.diagnostic.Diagnostic;
import java.util.List;

/**
 * A node needs one of its operands as a constant at import time (Reshape's shape, ReduceSum's axes,
 * Slice's starts, ...), but the value is computed from graph inputs. Relay's static typing fixes
 * shapes at compile time, so such a model imports only once those graph inputs are bound to values
 * ({@link ImportOptions#frozenInputs}). The exception carries what a caller needs to do that without
 * parsing messages: the ONNX value that must be constant and the graph inputs it is computed from.
 */
public final class NeedsConstantException extends OnnxFormatException {
    private final String value;
    private final List<String> graphInputs;

    public NeedsConstantException(String message, String value, List<String> graphInputs) {
        super(message);
        this.value = value;
        this.graphInputs = List.copyOf(graphInputs);
    }

    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("onnx-needs-constant", getMessage());
    }

    /** The ONNX value name (a node input) that must be constant. */
    public String value() {
        return value;
    }

    /** The graph inputs (not initializers) that {@link #value()} depends on; empty when unknown. */
    public List<String> graphInputs() {
        return graphInputs;
    }

    NeedsConstantException withGraphInputs(List<String> inputs) {
        return new NeedsConstantException(getMessage(), value, inputs);
    }
}
