package dev.relayfarm.services.store;

/**
 * Which schedules {@link ScheduleReviews#list} returns; a null field does not filter.
 *
 * @param workload    the exact workload key
 * @param status      PENDING, APPROVED, REJECTED or PINNED
 * @param limit       at most this many, most recently updated first
 */
public record ScheduleFilter(String workload, String target, String status, String deviceClass, int limit) {
}
