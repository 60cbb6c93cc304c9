package dev.relayfarm.kernel.codegen;

/** The C compiler rejected generated source, or could not be run. */
public final class CompileException extends RuntimeException {
    public CompileException(String message) {
        super(message);
    }

    public CompileException(String message, Throwable cause) {
        super(message, cause);
    }
}
