package dev.relayfarm.services.store;

/**
 * What {@link ScheduleReviews#autoApproveIfEligible} did with one schedule.
 *
 * @param approved whether it is now APPROVED by the policy
 * @param reason   why (or why not), in words: for the worker's log and the history note
 */
public record AutoApproval(long scheduleId, boolean approved, String reason) {
}
