package dev.relayfarm.services.store;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * A measuring device as its hardware agent reported it (table {@code devices}), with its recent rate.
 *
 * @param status                ONLINE, DRAINING (takes no new work, finishes what it has) or OFFLINE (no heartbeat
 *                              for {@code relayfarm.farm.device-offline-after})
 * @param inFlight              candidates being measured now
 * @param measured              measurements reported, all time
 * @param measurementsPerMinute tuning records from this device in the last 5 minutes, per minute
 * @param failures              failed measurements by error type, e.g. {@code {"TIMEOUT": 3}}
 * @param compiler              the C compiler the agent builds with ({@code CCompiler.identity()}), null before it said
 */
public record DeviceRow(String id, String deviceClass, String host, String status, Instant registeredAt, Instant lastHeartbeat, int inFlight,
                        long measured, double measurementsPerMinute, JsonNode failures, String compiler, String relayfarmVersion,
                        JsonNode capabilities, JsonNode hardware) {
}
