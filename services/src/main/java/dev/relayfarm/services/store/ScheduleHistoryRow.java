package dev.relayfarm.services.store;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * One decision on a schedule (table {@code schedule_history}, never updated): PROPOSED by a worker, APPROVED,
 * REJECTED or PINNED by a reviewer, AUTO_APPROVED by the policy.
 *
 * @param status the schedule's status after it
 * @param actor  the reviewer's token name, the worker's id, or {@code auto-approve}
 * @param config the config decided on, as it was then
 */
public record ScheduleHistoryRow(long id, String action, String status, String actor, String note, JsonNode config, Double costUs, Instant at) {
}
