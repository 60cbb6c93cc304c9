package dev.relayfarm.compile;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.LimitError;

/**
 * A model exceeds one of the {@link CompileLimits}: the message names the quantity, the limit and the setting
 * that raises it. A user error (the same model fails the same way again), unlike other artifact failures.
 */
public final class ArtifactLimitException extends RuntimeException implements LimitError {
    public ArtifactLimitException(String message) {
        super(message);
    }

    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("artifact-limit", getMessage());
    }
}
