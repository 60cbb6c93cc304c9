package dev.relayfarm.tuning;

import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.diagnostic.InputError;

/** A schedules file ({@link ScheduleLog}) line that cannot be read; the message names file:line and what is wrong. */
public final class ScheduleFileException extends RuntimeException implements InputError {
    public ScheduleFileException(String message) {
        super(message);
    }

    @Override
    public Diagnostic diagnostic() {
        return Diagnostic.error("invalid-schedules", getMessage());
    }
}
