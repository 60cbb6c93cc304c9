package dev.relayfarm.kernel.lower;

import dev.relayfarm.ir.Function;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ConfigSpace;
import dev.relayfarm.kernel.template.ScheduleConfig;

/**
 * One fused Primitive function as a kernel to be lowered ({@link PrimitiveLowering#plan}): its name, the
 * function, the target, and what its anchor's template makes of it — the workload key schedules are stored
 * and looked up by (e.g. {@code dense(data[1,784]float32,weight[128,784]float32)}), the template's name,
 * its configuration space for these shapes and its default configuration. Everything a schedule choice
 * needs, without the loop nest, which {@link PrimitiveLowering#lower(KernelPlan, ScheduleConfig)} builds
 * once per configuration.
 */
public record KernelPlan(String name, Function primitive, Target target, String workload, String template, ConfigSpace space,
                         ScheduleConfig defaultConfig) {}
