package dev.relayfarm.tuning;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.GraphBuilder;
import dev.relayfarm.compile.GraphPlan;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.lower.KernelPlan;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.kernel.lower.PrimitiveLowering;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A module's tuning tasks and the lowering of one task with one configuration. Listing tasks lowers
 * nothing: each kernel is only planned ({@link PrimitiveLowering#plan}: its tensor expressions built to
 * find the anchor template and its workload key), so a job's kernels are lowered once per configuration
 * they are built with, by codegen.
 */
public final class TuningTasks {
    private TuningTasks() {}

    /**
     * The distinct workloads of {@code optimized}'s kernels (after fuse-ops) for {@code target}, in kernel
     * order: the keys codegen looks {@link dev.relayfarm.compile.CompileOptions#schedules()} up by, each with the
     * kernels that share it. An operator without a kernel is an {@link dev.relayfarm.compile.UnsupportedKernelException}
     * naming the kernel, as in codegen.
     */
    public static List<TuningTask> extract(IRModule optimized, Target target) {
        Map<String, KernelPlan> first = new LinkedHashMap<>();
        Map<String, List<String>> kernels = new LinkedHashMap<>();
        for (GraphPlan.Kernel k : GraphBuilder.build(optimized).kernels()) {
            KernelPlan plan = ArtifactCompiler.plan(k, target);
            first.putIfAbsent(plan.workload(), plan);
            kernels.computeIfAbsent(plan.workload(), w -> new ArrayList<>()).add(k.name());
        }
        List<TuningTask> out = new ArrayList<>();
        for (KernelPlan p : first.values()) out.add(new TuningTask(p, kernels.get(p.workload())));
        return out;
    }

    /** The task's primitive lowered with {@code config} (a point of its space, or of another template of its operator). */
    public static LoweredKernel lower(TuningTask task, ScheduleConfig config) {
        return PrimitiveLowering.lower(task.plan(), config);
    }
}
