package dev.relayfarm.serde;

/**
 * A JSON document is not a valid Relay IR document. The message starts with the JSON path of the
 * offending value, e.g. {@code $.nodes[12].args[1]: unknown node id 40}.
 */
public final class IrJsonException extends RuntimeException {
    private final String path;
    private final String detail;

    public IrJsonException(String path, String detail) {
        this(path, detail, null);
    }

    public IrJsonException(String path, String detail, Throwable cause) {
        super(path + ": " + detail, cause);
        this.path = path;
        this.detail = detail;
    }

    /** JSON path of the problem, {@code $} for the document itself. */
    public String path() {
        return path;
    }

    /** The message without the path. */
    public String detail() {
        return detail;
    }
}
