package dev.relayfarm.services.store;

import dev.relayfarm.services.store.JobStatus;
import java.util.UUID;

/**
 * A status change {@link JobStatus#canMoveTo} does not allow, out of a status that is not terminal (a move out of a
 * terminal status is refused quietly: that is a cancel or a failure winning a race). Nothing was written.
 */
public final class IllegalJobTransition extends IllegalStateException {
    public IllegalJobTransition(UUID job, JobStatus from, JobStatus to) {
        super("job " + job + ": " + from + " -> " + to + " is not a legal status change");
    }
}
