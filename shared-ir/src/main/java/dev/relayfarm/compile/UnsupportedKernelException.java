package dev.relayfarm.compile;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.UnsupportedError;

/**
 * A kernel of the model cannot be lowered: one of its operators has no compute for its dtype or shape (the message
 * names the kernel and the operator). The model uses what codegen cannot do yet, so it is a user error, unlike the
 * other {@link dev.relayfarm.artifact.ArtifactException}s (a missing C compiler, an unwritable directory).
 */
public final class UnsupportedKernelException extends RuntimeException implements UnsupportedError {
    public UnsupportedKernelException(String kernel, UnsupportedOperationException cause) {
        super("kernel " + kernel + ": " + cause.getMessage(), cause);
    }

    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("unsupported-kernel", getMessage());
    }
}
