package dev.relayfarm.frontend;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.ImportError;

/**
 * An ONNX file that cannot be read or imported: the message names the file and, where it applies,
 * the node (name, op type, opset) or tensor at fault.
 */
public class OnnxFormatException extends RuntimeException implements ImportError {
    public OnnxFormatException(String message) {
        super(message);
    }

    public OnnxFormatException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Code {@code onnx-malformed}; the subclasses name what the importer does not support. */
    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("onnx-malformed", getMessage());
    }
}
