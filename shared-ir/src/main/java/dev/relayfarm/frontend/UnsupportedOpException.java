package dev.relayfarm.frontend;

import dev.relayfarm.diagnostic.Diagnostic;

/** A model uses an operator (or element type) the importer has no conversion for; conformance runs count it as skipped. */
public class UnsupportedOpException extends OnnxFormatException {
    private final String what;

    public UnsupportedOpException(String message, String what) {
        super(message);
        this.what = what;
    }

    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("onnx-unsupported", getMessage());
    }

    /** The operator type, or e.g. "dtype STRING". */
    public String what() {
        return what;
    }
}
