package dev.relayfarm.cli;

/**
 * A mistake in what the user gave a command (a missing file, a bad option value, text that is not
 * UTF-8): reported by {@link CliErrors} as one line, {@code relayc <cmd>: <message>}, never with a
 * stack trace.
 */
final class UserError extends RuntimeException {
    UserError(String message) {
        super(message);
    }
}
