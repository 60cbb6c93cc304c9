package dev.relayfarm.diagnostic;

/**
 * A failure that is the user's: the model or the request is wrong, or asks for what the compiler cannot do. Compiling
 * the same input again fails the same way, so the farm fails the job at once instead of retrying, {@code relayc}
 * prints one line and exits with its user-error code, and the gateway answers 4xx. A throwable that is no
 * {@code CompileError} is a compiler bug or an environment fault (a missing C compiler, a database outage).
 *
 * <p>Each exception the library throws for a user error implements exactly one kind; its {@link #diagnostic()} gives
 * the stable code clients branch on. The kinds are interfaces, not a base class, because the exceptions keep their
 * Java supertypes ({@code ModelInputException} and {@code TargetException} stay {@link IllegalArgumentException}s
 * that callers catch as such). Java requires the permitted kinds of a sealed type in an unnamed module to live in
 * its package; the concrete exceptions live with the code that throws them.
 */
public sealed interface CompileError permits ImportError, TypeCheckError, UnsupportedError, InputError, LimitError {
    /** What is wrong, with its code; its message is the exception's (minus any source excerpt). */
    Diagnostic diagnostic();

    /** The exception's message, exactly as it is reported. */
    String getMessage();
}
