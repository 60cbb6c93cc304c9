package dev.relayfarm.types;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.TypeCheckError;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The program is ill-typed: a user error, not a compiler crash. Carries the diagnostics (errors
 * first, then any warnings found before checking stopped); the message is one diagnostic per line.
 */
public class TypeException extends RuntimeException implements TypeCheckError {
    private final transient List<Diagnostic> diagnostics;

    public TypeException(List<Diagnostic> diagnostics) {
        super(diagnostics.stream().map(Diagnostic::toString).collect(Collectors.joining("\n")));
        this.diagnostics = List.copyOf(diagnostics);
    }

    public List<Diagnostic> diagnostics() {
        return diagnostics;
    }

    /** The first error (its code: {@code type-mismatch}, {@code under-constrained}, ...). */
    @Override
    public Diagnostic diagnostic() {
        List<Diagnostic> errors = errors();
        return errors.isEmpty() ? Diagnostic.error("ill-typed", getMessage()) : errors.getFirst();
    }

    /** Only the errors. */
    public List<Diagnostic> errors() {
        return diagnostics.stream().filter(Diagnostic::isError).toList();
    }
}
