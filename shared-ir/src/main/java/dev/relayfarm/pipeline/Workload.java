package dev.relayfarm.pipeline;

import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.List;

/**
 * One tunable workload of an optimized module for a target: the key schedules are stored and looked up
 * by ({@link dev.relayfarm.kernel.lower.LoweredKernel#workload()}, e.g.
 * {@code dense_pack.x86(...)}), the template that schedules it, its default configuration, and the
 * kernels of the module that share it.
 */
public record Workload(String key, String template, ScheduleConfig defaultConfig, List<String> kernels) {
    public Workload {
        kernels = List.copyOf(kernels);
    }
}
