package dev.relayfarm.types;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The program is ill-typed: a user error, not a compiler crash. Carries the diagnostics (errors
 * first, then any warnings found before checking stopped); the message is one diagnostic per line.
 */
public class TypeException extends RuntimeException {
    private final transient List<Diagnostic> diagnostics;

    public TypeException(List<Diagnostic> diagnostics) {
        super(diagnostics.stream().map(Diagnostic::toString).collect(Collectors.joining("\n")));
        this.diagnostics = List.copyOf(diagnostics);
    }

    public List<Diagnostic> diagnostics() {
        return diagnostics;
    }

    /** Only the errors. */
    public List<Diagnostic> errors() {
        return diagnostics.stream().filter(Diagnostic::isError).toList();
    }
}
