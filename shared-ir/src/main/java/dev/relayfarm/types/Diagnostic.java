package dev.relayfarm.types;

import dev.relayfarm.ir.Span;

/**
 * One message of the type checker: a stable code, where it happened and what is wrong, stating the
 * expected and the actual type. Prints as {@code file:line:col: message}, or {@code in @global:
 * message} for nodes built in code (no source position).
 *
 * @param severity error or warning
 * @param code a stable kebab-case identifier, e.g. {@code type-mismatch}, {@code under-constrained}
 * @param span the offending expression's position (or the nearest enclosing one that has one)
 * @param global the global function being checked, without {@code @}; empty when unknown
 * @param message what is wrong, e.g. {@code nn.conv2d: input channels 3 (data) do not match ...}
 */
public record Diagnostic(Severity severity, String code, Span span, String global, String message) {
    public enum Severity { ERROR, WARNING }

    public static Diagnostic error(String code, Span span, String global, String message) {
        return new Diagnostic(Severity.ERROR, code, span, global, message);
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
