package dev.relayfarm.compile;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.Map;
import java.util.TreeMap;

/**
 * How to compile an optimized module: the target, the -O level it was optimized at (recorded in
 * the manifest), and schedule configs by workload (from a tuning log; kernels whose workload is not
 * listed use their template's default).
 */
public record CompileOptions(Target target, int optLevel, Map<String, ScheduleConfig> schedules) {
    public CompileOptions {
        schedules = java.util.Collections.unmodifiableMap(new TreeMap<>(schedules));
    }

    public static CompileOptions host(int optLevel) {
        return new CompileOptions(Target.host(), optLevel, Map.of());
    }
}
