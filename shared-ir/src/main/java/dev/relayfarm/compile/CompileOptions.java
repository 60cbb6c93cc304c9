package dev.relayfarm.compile;

import dev.relayfarm.artifact.ScheduleSource;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * How to compile an optimized module: the target, the -O level it was optimized at (recorded in
 * the manifest), and schedule configs by workload key (what the schedule rule chose,
 * {@code dev.relayfarm.tuning.ScheduleRule}; kernels whose workload is not listed use their template's
 * default), where each listed config came from ({@code sources}: {@link ScheduleSource#TUNED} unless listed there; the
 * manifest shows it per kernel), and the {@link CompileLimits} that bound the work.
 */
public record CompileOptions(Target target, int optLevel, Map<String, ScheduleConfig> schedules, Map<String, ScheduleSource> sources,
                             CompileLimits limits) {
    public CompileOptions {
        schedules = Collections.unmodifiableMap(new TreeMap<>(schedules));
        sources = Collections.unmodifiableMap(new TreeMap<>(sources));
        for (Map.Entry<String, ScheduleSource> e : sources.entrySet()) {
            // a source describes a listed config; "default" is what an unlisted workload gets
            if (!schedules.containsKey(e.getKey()) || e.getValue() == ScheduleSource.DEFAULT) {
                throw new IllegalArgumentException("a source is given for a listed schedule and is tuned or transferred, got " + e.getValue()
                        + " for " + e.getKey());
            }
        }
        Objects.requireNonNull(limits, "limits");
    }

    /** Every listed config tuned. */
    public CompileOptions(Target target, int optLevel, Map<String, ScheduleConfig> schedules, CompileLimits limits) {
        this(target, optLevel, schedules, Map.of(), limits);
    }

    /** Every listed config tuned, with the {@link CompileLimits#DEFAULT} limits. */
    public CompileOptions(Target target, int optLevel, Map<String, ScheduleConfig> schedules) {
        this(target, optLevel, schedules, CompileLimits.DEFAULT);
    }

    public static CompileOptions host(int optLevel) {
        return new CompileOptions(Target.host(), optLevel, Map.of());
    }

    public CompileOptions withLimits(CompileLimits l) {
        return new CompileOptions(target, optLevel, schedules, sources, l);
    }

    /** With {@code s} as the sources of listed configs (those it does not name stay tuned). */
    public CompileOptions withSources(Map<String, ScheduleSource> s) {
        return new CompileOptions(target, optLevel, schedules, s, limits);
    }

    /** Where the config of {@code workload}'s kernels comes from. */
    public ScheduleSource source(String workload) {
        if (!schedules.containsKey(workload)) return ScheduleSource.DEFAULT;
        return sources.getOrDefault(workload, ScheduleSource.TUNED);
    }
}
