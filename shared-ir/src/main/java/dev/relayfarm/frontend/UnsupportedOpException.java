package dev.relayfarm.frontend;

/** A model uses an operator (or element type) the importer has no conversion for; conformance runs count it as skipped. */
public class UnsupportedOpException extends OnnxFormatException {
    private final String what;

    public UnsupportedOpException(String message, String what) {
        super(message);
        this.what = what;
    }

    /** The operator type, or e.g. "dtype STRING". */
    public String what() {
        return what;
    }
}
