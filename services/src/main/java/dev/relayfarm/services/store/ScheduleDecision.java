package dev.relayfarm.services.store;

/**
 * What a reviewer decides on a schedule: the status it gets and the {@code schedule_history} action recorded.
 * Any decision may follow any other (approving a REJECTED schedule is allowed; the history keeps both), except that
 * only a PINNED schedule can be unpinned.
 */
public enum ScheduleDecision {
    /** Codegen may apply it, unless it measures slower than the template default (the library's ScheduleRule). */
    APPROVE("APPROVED", "APPROVED"),
    /** Codegen never applies it; a reason (the note) is required. */
    REJECT("REJECTED", "REJECTED"),
    /** Codegen applies it whatever the measurements say. */
    PIN("PINNED", "PINNED"),
    /** Back to APPROVED: the rule judges it by its measurements again. Only a PINNED schedule can be unpinned. */
    UNPIN("APPROVED", "UNPINNED");

    public final String status;
    public final String action;

    ScheduleDecision(String status, String action) {
        this.status = status;
        this.action = action;
    }
}
