package dev.relayfarm.services.store;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * One measurement behind a schedule (a {@code tuning_records} row of the same workload, target and device class): what
 * a reviewer compares the proposed config with.
 *
 * @param costUs the median, null when {@code error} is set (COMPILE_ERROR, RUNTIME_ERROR, WRONG_ANSWER, TIMEOUT)
 * @param cv     the repeats' coefficient of variation: the measurement's noise
 */
public record TrialRow(long id, Long taskId, String deviceId, JsonNode config, Double costUs, Double cv, Integer number, Integer repeat,
                       Double defaultCostUs, String error, String errorDetail, String compiler, Instant measuredAt) {
}
