package dev.relayfarm.diagnostic;

import dev.relayfarm.ir.Span;

/**
 * One message about what a user gave the compiler: a stable code, where it happened and what is wrong. The type
 * checker reports its findings as diagnostics; every {@link CompileError} carries one. Prints as
 * {@code file:line:col: message}, or {@code in @global: message} for nodes built in code (no source position).
 *
 * @param severity error or warning
 * @param code a stable kebab-case identifier, e.g. {@code type-mismatch}, {@code relay-syntax}, {@code invalid-shapes};
 *     what a client may branch on (the message is for people and may be reworded)
 * @param span the offending source position (or the nearest enclosing one that has one); {@link Span#NONE} for
 *     errors about a request rather than a place in a model
 * @param global the global function being checked, without {@code @}; empty when unknown or not applicable
 * @param message what is wrong, e.g. {@code nn.conv2d: input channels 3 (data) do not match ...}
 */
public record Diagnostic(Severity severity, String code, Span span, String global, String message) {
    public enum Severity { ERROR, WARNING }

    public static Diagnostic error(String code, Span span, String global, String message) {
        return new Diagnostic(Severity.ERROR, code, span, global, message);
    }

    /** An error about the request or the model as a whole, with no source position. */
    public static Diagnostic error(String code, String message) {
        return error(code, Span.NONE, "", message);
    }

    public static Diagnostic warning(String code, Span span, String global, String message) {
        return new Diagnostic(Severity.WARNING, code, span, global, message);
    }

    public boolean isError() {
        return severity == Severity.ERROR;
    }

    @Override
    public String toString() {
        String where = span.isKnown() ? span.toString() : global.isEmpty() ? "<unknown>" : "in @" + global;
        return where + ": " + (severity == Severity.WARNING ? "warning: " : "") + message;
    }
}
