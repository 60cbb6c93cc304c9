package dev.relayfarm.services.store;

/**
 * A job's status as stored in {@code jobs.status} and reported by the REST API, and the moves between statuses
 * ({@link #canMoveTo}); {@link dev.relayfarm.services.store.JobStore} makes every move and refuses the others.
 */
public enum JobStatus {
    QUEUED, IMPORTING, TYPING, OPTIMIZING, TUNING, GENERATING, SUCCEEDED, FAILED, CANCELLED;

    /** No stage changes a job in one of these states again. */
    public boolean terminal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }

    /**
     * Whether a job in this status may move to {@code next}:
     * <ul>
     *   <li>nothing leaves a terminal status (a cancel or a failure recorded first stands);</li>
     *   <li>nothing returns to QUEUED;</li>
     *   <li>a stage's status follows any earlier status, or itself (the stage's message redelivered after its
     *       consumer died), never a later stage's: the pipeline does not run backwards;</li>
     *   <li>SUCCEEDED only follows GENERATING: only the last stage's artifact makes a job succeed;</li>
     *   <li>FAILED and CANCELLED follow any status that is not terminal.</li>
     * </ul>
     */
    public boolean canMoveTo(JobStatus next) {
        if (terminal()) return false;
        return switch (next) {
            case QUEUED -> false;
            case IMPORTING, TYPING, OPTIMIZING, TUNING, GENERATING -> compareTo(next) <= 0;
            case SUCCEEDED -> this == GENERATING;
            case FAILED, CANCELLED -> true;
        };
    }
}
