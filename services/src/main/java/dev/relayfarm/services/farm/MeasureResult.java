package dev.relayfarm.services.farm;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * What an agent measured for a {@link MeasureRequest} (topic {@code measure.results}, key: the request id): the
 * records of the batch as the library writes them ({@code TuningRecord#toJson}: the device, compiler and version of
 * the agent that measured), the default's first and then one per candidate in request order. When the default itself
 * failed ({@code baselineFailed}), only its record: nothing else could be checked.
 */
public record MeasureResult(UUID requestId, long taskId, String workerId, String deviceId, boolean baselineFailed, List<String> records,
                            Instant measuredAt) {
    public MeasureResult {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(workerId, "workerId");
        Objects.requireNonNull(deviceId, "deviceId");
        records = List.copyOf(records);
        if (records.isEmpty()) throw new IllegalArgumentException("a measure result has at least the default's record");
        Objects.requireNonNull(measuredAt, "measuredAt");
    }
}
