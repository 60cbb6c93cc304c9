package dev.relayfarm.kernel.target;

/** A target string that cannot be parsed; the message names the offending token. */
public final class TargetException extends IllegalArgumentException {
    public TargetException(String message) {
        super(message);
    }
}
