package dev.relayfarm.interp;

import dev.relayfarm.ir.Span;

/**
 * A run-time error of the evaluated program (wrong argument count, calling a non-function, no
 * matching clause, an operator kernel failing), with the span of the expression that failed. The
 * message starts with the span when it is known.
 */
public final class InterpreterException extends RuntimeException {
    private final Span span;

    public InterpreterException(String message, Span span) {
        this(message, span, null);
    }

    public InterpreterException(String message, Span span, Throwable cause) {
        super(span.isKnown() ? span + ": " + message : message, cause);
        this.span = span;
    }

    public Span span() {
        return span;
    }
}
