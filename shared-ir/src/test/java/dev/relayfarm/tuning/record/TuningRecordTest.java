package dev.relayfarm.tuning.record;

import static dev.relayfarm.tuning.record.Records.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import java.util.List;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/** {@link TuningRecord}: the table's fields as one JSON line, read back equal; the batch's default cost on every record. */
class TuningRecordTest {
    @Test
    void everyKindOfRecordRoundTripsExactly() {
        List<TuningRecord> all = List.of(
                ok("dense[1,64]x[64,64]", config(8), 12.345678901234567, 15.25, 0),
                ok("w", config(4), 1e-3, null, 1),
                new TuningRecord("w", config(2), TARGET, HERE, CC, "0.1.0", new Measurement.Cost(3.0, Double.NaN, 1, 1), OptionalDouble.of(4),
                        T0.plusNanos(1000)),
                failed("w", config(16), MeasureError.TIMEOUT, 2),
                new TuningRecord("w", config(1), TARGET, THERE, CC, "0.1.0", new Measurement.Failure(MeasureError.COMPILE_ERROR, null),
                        OptionalDouble.empty(), T0));
        for (TuningRecord r : all) {
            String line = r.toJson();
            assertFalse(line.contains("\n"), "one line: " + line);
            assertEquals(r, TuningRecord.fromJson(line), line);
            assertEquals(line, TuningRecord.fromJson(line).toJson());
        }
    }

    @Test
    void theLineHasTheTableColumns() throws Exception {
        var n = new ObjectMapper().readTree(ok("w", config(8), 10, 20.0, 0).toJson());
        List<String> fields = new java.util.ArrayList<>();
        n.fieldNames().forEachRemaining(fields::add);
        assertEquals(List.of("workload_key", "template", "config", "target", "device_class", "hardware", "compiler", "relayfarm_version", "cost_us", "cv",
                "number", "repeat", "default_cost_us", "measured_at"), fields);
        assertEquals("dense_pack.x86", n.get("template").asText());
        assertEquals(HERE.deviceClass(), n.get("device_class").asText());
        var f = new ObjectMapper().readTree(failed("w", config(8), MeasureError.WRONG_ANSWER, 0).toJson());
        assertEquals("WRONG_ANSWER", f.get("error").asText());
        assertFalse(f.has("cost_us"));
    }

    @Test
    void aBatchCarriesItsDefaultsCost() {
        var def = config(1);
        List<Measurement> batch = List.of(new Measurement("w", config(8), new Measurement.Cost(9, 0.01, 10, 3)),
                new Measurement("w", def, new Measurement.Cost(12, 0.01, 10, 3)),
                new Measurement("w", config(4), new Measurement.Failure(MeasureError.RUNTIME_ERROR, "SIGSEGV")));
        RecordContext ctx = new RecordContext(TARGET, HERE, CC, "0.1.0");
        List<TuningRecord> rs = TuningRecord.batch(batch, def, ctx, T0.plusNanos(999));
        assertEquals(3, rs.size());
        for (TuningRecord r : rs) assertEquals(OptionalDouble.of(12), r.defaultCostUs());
        assertEquals(T0, rs.getFirst().measuredAt(), "kept to the microsecond, as the table keeps it");
        assertTrue(rs.get(0).fasterThanDefault());
        assertFalse(rs.get(1).fasterThanDefault(), "the default is not faster than itself");
        assertFalse(rs.get(2).fasterThanDefault());
        // without the default in the batch, nothing can be shown faster than it
        assertFalse(TuningRecord.batch(batch.subList(0, 1), def, ctx, T0).getFirst().fasterThanDefault());
    }

    /** Faster means faster than the noise: by 2 %, or twice the record's own spread when that is larger. */
    @Test
    void aGainWithinTheNoiseIsNotFaster() {
        var def = config(1);
        RecordContext ctx = new RecordContext(TARGET, HERE, CC, "0.1.0");
        java.util.function.BiFunction<Double, Double, Boolean> faster = (cost, cv) -> TuningRecord.batch(List.of(
                new Measurement("w", def, new Measurement.Cost(100, 0.005, 10, 3)),
                new Measurement("w", config(8), new Measurement.Cost(cost, cv, 10, 3))), def, ctx, T0).get(1).fasterThanDefault();
        assertFalse(faster.apply(99.0, 0.001), "1 % faster is within the noise");
        assertTrue(faster.apply(97.0, 0.001), "3 % faster with a tight spread counts");
        assertFalse(faster.apply(95.0, 0.04), "5 % faster with a 4 % spread does not (needs 8 %)");
        assertTrue(faster.apply(90.0, 0.04));
    }

    @Test
    void aBadLineSaysWhatIsWrong() {
        String good = ok("w", config(8), 10, 20.0, 0).toJson();
        for (String[] c : new String[][] {
                {good.replace("\"cost_us\":10.0,", ""), "\"cost_us\" or \"error\""},
                {good.replace("\"template\":\"dense_pack.x86\",\"config\"", "\"template\":\"conv2d\",\"config\""), "\"template\" is \"conv2d\""},
                {good.replace("\"measured_at\":\"2025-03-01T10:00:00.123456Z\"", "\"measured_at\":\"yesterday\""), "ISO-8601"},
                {good.replace("\"number\":100", "\"number\":1.5"), "\"number\" must be an integer"},
                {good.replace("\"compiler\":", "\"cc\":"), "needs \"compiler\""},
                {"[1]", "is a JSON object"},
                {"{", "not JSON"}}) {
            String msg = assertThrows(IllegalArgumentException.class, () -> TuningRecord.fromJson(c[0]), c[0]).getMessage();
            assertTrue(msg.contains(c[1]), msg);
        }
    }
}
