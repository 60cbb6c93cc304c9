package dev.relayfarm.services.store;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The policy that approves a proposed schedule without a reviewer ({@code relayfarm.farm.auto-approve.*};
 * {@link ScheduleReviews#autoApproveIfEligible}). Off by default: a schedule goes into every compiled model of its
 * workload, so trusting measurements alone is the operator's decision.
 *
 * @param enabled         whether the policy approves anything
 * @param minSpeedup      the least {@code default_cost_us / cost_us}: 1.1 asks for 10% faster than the template default,
 *                        well above the noise a single best-of-many median shows
 * @param minMeasurements the least independent measurements of the config ({@code schedules.measurements}): one lucky
 *                        measurement is not evidence
 */
@ConfigurationProperties("relayfarm.farm.auto-approve")
public record AutoApproveProperties(
        @DefaultValue("false") boolean enabled,
        @DefaultValue("1.1") double minSpeedup,
        @DefaultValue("2") int minMeasurements) {
}
