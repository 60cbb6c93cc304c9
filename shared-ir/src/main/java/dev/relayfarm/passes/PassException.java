package dev.relayfarm.passes;

/**
 * A pass broke its contract (its output is ill-formed or ill-typed) or a pipeline was asked for
 * something that does not exist (an unknown pass name). The message names the pass.
 */
public class PassException extends RuntimeException {
    public PassException(String message) {
        super(message);
    }

    public PassException(String message, Throwable cause) {
        super(message, cause);
    }
}
