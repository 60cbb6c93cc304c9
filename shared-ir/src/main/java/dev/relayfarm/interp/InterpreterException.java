package dev.relayfarm.interp;

import dev.relayfarm.ir.Span;

/**
 * A run-time error of the evaluated program (wrong argument count, calling a non-function, no
 * matching clause, an operator kernel failing), with the span of the expression that failed. The
 * message starts with the span when it is known.
 */
public final class InterpreterException extends RuntimeException {
    private final Span span;
    private final InterpreterOptions.Budget budget;

    public InterpreterException(String message, Span span) {
        this(message, span, null);
    }

    public InterpreterException(String message, Span span, Throwable cause) {
        this(message, span, cause, null);
    }

    /** An evaluation stopped by one of its {@link InterpreterOptions} budgets. */
    public InterpreterException(String message, Span span, Throwable cause, InterpreterOptions.Budget budget) {
        super(span.isKnown() ? span + ": " + message : message, cause);
        this.span = span;
        this.budget = budget;
    }

    /** The budget that stopped evaluation, or null for an error of the program itself. */
    public InterpreterOptions.Budget budget() {
        return budget;
    }

    public Span span() {
        return span;
    }
}
