package dev.relayfarm.services.store;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * A stored schedule (table {@code schedules}): the best config a tuning task found for a workload on a device class,
 * and where its review stands.
 *
 * @param config        the {@code ScheduleConfig} JSON ({@code {"template": ..., "knobs": {...}}})
 * @param speedup       {@code defaultCostUs / costUs}, null when either is unknown
 * @param measurements  independent measurements of the config (the auto-approve policy wants several)
 * @param status        PENDING, APPROVED, REJECTED or PINNED
 * @param reviewer      the token name (or {@code auto-approve}) of the last decision, null while PENDING
 */
public record ScheduleRow(long id, String workloadKey, String target, String deviceClass, String template, JsonNode config, Double costUs,
                          Double defaultCostUs, Double speedup, int measurements, Long recordId, Long taskId, String status, String reviewer,
                          String note, Instant createdAt, Instant updatedAt) {
}
