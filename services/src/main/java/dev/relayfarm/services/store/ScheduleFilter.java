package dev.relayfarm.services.store;

/**
 * Which schedules {@link ScheduleReviews#list} returns; a null field does not filter.
 *
 * @param workload    the exact workload key
 * @param status      PENDING, APPROVED, REJECTED or PINNED
 * @param minSpeedup  default cost over cost at least this (a schedule without both costs is left out)
 * @param limit       at most this many, most recently updated first
 */
public record ScheduleFilter(String workload, String target, String status, String deviceClass, Double minSpeedup, int limit) {
    /** Without a speedup filter. */
    public ScheduleFilter(String workload, String target, String status, String deviceClass, int limit) {
        this(workload, target, status, deviceClass, null, limit);
    }
}
