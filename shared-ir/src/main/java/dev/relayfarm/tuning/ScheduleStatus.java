package dev.relayfarm.tuning;

/** A stored schedule's review state (the farm's {@code schedules.status}); only PINNED and APPROVED ones may apply. */
public enum ScheduleStatus {
    /** Tuned, not reviewed yet. */
    PENDING,
    /** Reviewed and accepted: applies when it was not measured slower than the template default. */
    APPROVED,
    /** Reviewed and refused. */
    REJECTED,
    /** Chosen by a reviewer for its workload and target: applies before anything else. */
    PINNED
}
