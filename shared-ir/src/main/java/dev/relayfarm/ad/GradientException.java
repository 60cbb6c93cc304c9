package dev.relayfarm.ad;

/** A program the gradient pass cannot differentiate; the message names the operator, node or type, and where. */
public final class GradientException extends RuntimeException {
    public GradientException(String message) {
        super(message);
    }
}
