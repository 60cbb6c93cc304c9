package dev.relayfarm.tuning.record;

import static dev.relayfarm.tuning.record.Records.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.relayfarm.tuning.MeasureError;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/** {@link RecordSet}: merging dedupes, filters by target and device class, best and statistics per key. */
class RecordSetTest {
    private final TuningRecord a = ok("w", config(8), 10, 20.0, 0), b = ok("w", config(4), 8, 16.0, 1), c = failed("w", config(2), MeasureError.TIMEOUT, 2),
            d = failed("w", config(16), MeasureError.WRONG_ANSWER, 3), e = failed("w", config(32), MeasureError.TIMEOUT, 4),
            elsewhere = on(ok("w", config(8), 1, 30.0, 5), TARGET, THERE, CC), otherTarget = on(ok("w", config(8), 2, 30.0, 6), "c -mcpu=native", HERE, CC);

    @Test
    void mergeKeepsEachMeasurementOnceInTimeOrder() {
        RecordSet merged = RecordSet.merge(List.of(new RecordSet(List.of(b, c)), new RecordSet(List.of(a, b)), new RecordSet(List.of(c, d))));
        assertEquals(List.of(a, b, c, d), merged.records());
        TuningRecord again = ok("w", config(8), 11, 20.0, 7); // the same config measured again is another record
        assertEquals(List.of(a, b, again), RecordSet.merge(List.of(new RecordSet(List.of(a, b)), new RecordSet(List.of(again)))).records());
    }

    @Test
    void filterByTargetAndDeviceClass() {
        RecordSet all = new RecordSet(List.of(a, elsewhere, otherTarget));
        assertEquals(List.of(a, otherTarget), all.filter(Optional.empty(), Optional.of(HERE.deviceClass())).records());
        assertEquals(List.of(a, elsewhere), all.filter(Optional.of(TARGET), Optional.empty()).records());
        assertEquals(List.of(a), all.filter(Optional.of(TARGET), Optional.of(HERE.deviceClass())).records());
        assertEquals(all, all.filter(Optional.empty(), Optional.empty()));
    }

    @Test
    void bestIsPerKeyCheapestFirstOneRecordPerConfig() {
        TuningRecord aSlower = ok("w", config(8), 12, 20.0, 9);
        Map<RecordKey, List<TuningRecord>> best = new RecordSet(List.of(a, b, c, aSlower, elsewhere, otherTarget)).best(2);
        assertEquals(List.of(b, a), best.get(a.key()));
        assertEquals(List.of(elsewhere), best.get(elsewhere.key()), "never compared with another device's records");
        assertEquals(List.of(otherTarget), best.get(otherTarget.key()));
        assertEquals(List.of(b), new RecordSet(List.of(a, b)).best(1).get(a.key()));
        assertEquals(Map.of(), new RecordSet(List.of(c, d)).best(3), "nothing ran: no best");
        assertThrows(IllegalArgumentException.class, () -> new RecordSet(List.of(a)).best(0));
    }

    @Test
    void statsCountOutcomesAndTheSpeedupOverTheBestsBatchDefault() {
        List<WorkloadStats> stats = new RecordSet(List.of(a, b, c, d, e, elsewhere)).stats();
        assertEquals(2, stats.size());
        WorkloadStats s = stats.getFirst();
        assertEquals(a.key(), s.key());
        assertEquals(5, s.records());
        assertEquals(2, s.ok());
        assertEquals(3, s.failures());
        assertEquals(Map.of(MeasureError.TIMEOUT, 2, MeasureError.WRONG_ANSWER, 1), s.failed());
        assertEquals(OptionalDouble.of(8), s.bestUs());
        assertEquals(OptionalDouble.of(16), s.defaultUs());
        assertEquals(2.0, s.speedup().orElseThrow(), 1e-12);
        WorkloadStats none = new RecordSet(List.of(c)).stats().getFirst();
        assertEquals(OptionalDouble.empty(), none.bestUs());
        assertEquals(OptionalDouble.empty(), none.speedup());
    }
}
