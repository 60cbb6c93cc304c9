package dev.relayfarm.services.kit;

/** A job's status as stored in {@code jobs.status} and reported by the REST API. */
public enum JobStatus {
    QUEUED, IMPORTING, TYPING, OPTIMIZING, TUNING, GENERATING, SUCCEEDED, FAILED, CANCELLED;

    /** No stage changes a job in one of these states again. */
    public boolean terminal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }
}
