package dev.relayfarm.tuning.record;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/** Records built by hand for the record tests: a workload, a device, a compiler, costs. */
final class Records {
    static final Device HERE = Device.of("x86_64", "Test CPU", List.of("avx", "avx2", "fma"), 2);
    static final Device THERE = Device.of("x86_64", "Other CPU", List.of("avx", "avx2", "avx512f"), 16);
    static final String CC = "gcc (Test) 13.2.0";
    static final String TARGET = "c -mcpu=x86-64-v3";
    static final Instant T0 = Instant.parse("2025-03-01T10:00:00.123456Z");

    private Records() {}

    static ScheduleConfig config(int tileX) {
        return new ScheduleConfig("dense_pack.x86", Map.of("tile_x", tileX, "tile_y", 1, "order", "xy"));
    }

    static TuningRecord ok(String workload, ScheduleConfig config, double us, Double defaultUs, int second) {
        return new TuningRecord(workload, config, TARGET, HERE, CC, "0.1.0", new Measurement.Cost(us, 0.02, 100, 5),
                defaultUs == null ? OptionalDouble.empty() : OptionalDouble.of(defaultUs), T0.plusSeconds(second));
    }

    static TuningRecord failed(String workload, ScheduleConfig config, MeasureError error, int second) {
        return new TuningRecord(workload, config, TARGET, HERE, CC, "0.1.0", new Measurement.Failure(error, "it broke\n\"badly\""),
                OptionalDouble.of(20.0), T0.plusSeconds(second));
    }

    static TuningRecord on(TuningRecord r, String target, Device device, String compiler) {
        return new TuningRecord(r.workloadKey(), r.config(), target, device, compiler, r.relayfarmVersion(), r.outcome(), r.defaultCostUs(), r.measuredAt());
    }
}
