package dev.relayfarm.kernel.target;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.InputError;

/** A target string that cannot be parsed; the message names the offending token. */
public final class TargetException extends IllegalArgumentException implements InputError {
    public TargetException(String message) {
        super(message);
    }

    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("invalid-target", getMessage());
    }
}
