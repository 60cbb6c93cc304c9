package dev.relayfarm.compile;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.Map;
import java.util.TreeMap;

/**
 * How to compile an optimized module: the target, the -O level it was optimized at (recorded in
 * the manifest), and schedule configs by workload key (what the schedule rule chose,
 * {@code dev.relayfarm.tuning.ScheduleRule}; kernels whose workload is not listed use their template's
 * default), and the {@link CompileLimits} that bound the work.
 */
public record CompileOptions(Target target, int optLevel, Map<String, ScheduleConfig> schedules, CompileLimits limits) {
    public CompileOptions {
        schedules = java.util.Collections.unmodifiableMap(new TreeMap<>(schedules));
        java.util.Objects.requireNonNull(limits, "limits");
    }

    /** With the {@link CompileLimits#DEFAULT} limits. */
    public CompileOptions(Target target, int optLevel, Map<String, ScheduleConfig> schedules) {
        this(target, optLevel, schedules, CompileLimits.DEFAULT);
    }

    public static CompileOptions host(int optLevel) {
        return new CompileOptions(Target.host(), optLevel, Map.of());
    }

    public CompileOptions withLimits(CompileLimits l) {
        return new CompileOptions(target, optLevel, schedules, l);
    }
}
