package dev.relayfarm.tuning.record;

import dev.relayfarm.tuning.MeasureError;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * What the records of one {@link RecordKey} say ({@code relayc records stats}): how many there are, how many ran and
 * how many failed by error type, the best cost and the default's cost measured in the best one's batch (µs), and so
 * the speedup tuning found. {@code template} is the best record's (else the first's).
 */
public record WorkloadStats(RecordKey key, String template, int records, int ok, Map<MeasureError, Integer> failed, OptionalDouble bestUs,
                            OptionalDouble defaultUs) {
    public WorkloadStats {
        failed = Collections.unmodifiableMap(failed.isEmpty() ? new EnumMap<>(MeasureError.class) : new EnumMap<>(failed));
    }

    /** Default over best (above 1: tuning gained), when both are known. */
    public OptionalDouble speedup() {
        return bestUs.isPresent() && defaultUs.isPresent() && bestUs.getAsDouble() > 0
                ? OptionalDouble.of(defaultUs.getAsDouble() / bestUs.getAsDouble()) : OptionalDouble.empty();
    }

    public int failures() {
        return records - ok;
    }
}
