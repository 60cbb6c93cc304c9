package dev.relayfarm.tuning;

import dev.relayfarm.ir.Function;
import dev.relayfarm.kernel.lower.KernelPlan;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ConfigSpace;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.List;

/**
 * One tunable workload of an optimized module for a target (TVM's AutoTVM task): {@code plan} is its first
 * kernel's ({@link KernelPlan}: the workload key schedules are stored and looked up by, the template, the
 * configuration space, the default configuration, the fused primitive function and the target), and
 * {@code kernels} names every kernel of the module that shares the key — one schedule serves them all.
 * A tuner measures {@link TuningTasks#lower} of the plan's primitive.
 */
public record TuningTask(KernelPlan plan, List<String> kernels) {
    public TuningTask {
        kernels = List.copyOf(kernels);
        if (kernels.isEmpty() || !kernels.getFirst().equals(plan.name())) {
            throw new IllegalArgumentException("a task's kernels start with its plan's kernel " + plan.name() + ", got " + kernels);
        }
    }

    /** The workload key. */
    public String key() {
        return plan.workload();
    }

    /** The name of the template that schedules the workload. */
    public String template() {
        return plan.template();
    }

    public ConfigSpace space() {
        return plan.space();
    }

    public ScheduleConfig defaultConfig() {
        return plan.defaultConfig();
    }

    /** The fused primitive function of the first kernel with this key. */
    public Function primitive() {
        return plan.primitive();
    }

    public Target target() {
        return plan.target();
    }
}
