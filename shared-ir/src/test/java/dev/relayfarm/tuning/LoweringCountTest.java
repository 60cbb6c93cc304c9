package dev.relayfarm.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.compile.GraphBuilder;
import dev.relayfarm.compile.GraphPlan;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.kernel.lower.LoweringObserver;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.Stages;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every kernel of a job is lowered once per configuration it is built with: listing tasks lowers nothing,
 * codegen lowers each kernel once (stored config or default), and the farm's path (the autotuner stage's
 * {@link Stages#tasks} + {@link ScheduleRule}, then the codegen stage's {@link Stages#codegen}) adds nothing.
 */
class LoweringCountTest {
    private static final Target HOST = Target.host();

    /** A lowering as the observer saw it. */
    private record Lowered(String kernel, ScheduleConfig config) {}

    private static List<Lowered> observe(Runnable body) {
        List<Lowered> seen = new ArrayList<>();
        LoweringObserver.observing((plan, config) -> seen.add(new Lowered(plan.name(), config)), () -> {
            body.run();
            return null;
        });
        return seen;
    }

    @Test
    void listingTasksLowersNothing() {
        IRModule opt = TuningModels.optimizedLayers(HOST);
        List<TuningTask> tasks = new ArrayList<>();
        assertEquals(List.of(), observe(() -> tasks.addAll(Stages.tasks(opt, HOST))));
        assertEquals(5, tasks.size(), tasks.stream().map(TuningTask::key).toList().toString());
        // two kernels (dense + relu, dense) share the first dense shape
        assertEquals(2, tasks.getFirst().kernels().size(), tasks.getFirst().toString());
        List<String> all = GraphBuilder.build(opt).kernels().stream().map(GraphPlan.Kernel::name).toList();
        assertEquals(all, tasks.stream().flatMap(t -> t.kernels().stream()).sorted((a, b) -> all.indexOf(a) - all.indexOf(b)).toList());
    }

    @Test
    void loweringATaskLowersItsPrimitiveOnce() {
        TuningTask dense = Stages.tasks(TuningModels.optimizedLayers(HOST), HOST).getFirst();
        ScheduleConfig other = TuningModels.nonDefault(dense);
        List<LoweredKernel> out = new ArrayList<>();
        assertEquals(List.of(new Lowered(dense.kernels().getFirst(), other)), observe(() -> out.add(TuningTasks.lower(dense, other))));
        assertEquals(dense.key(), out.getFirst().workload());
        assertEquals(other, out.getFirst().config());
    }

    @Test
    void codegenLowersEachKernelOnceWithItsStoredConfigOrItsDefault(@TempDir Path tmp) {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        IRModule opt = TuningModels.optimizedLayers(HOST);
        List<TuningTask> tasks = Stages.tasks(opt, HOST);
        // stored configs for two of the five workloads (one of them shared by two kernels); the rest default
        Map<String, ScheduleConfig> stored = Map.of(tasks.get(0).key(), TuningModels.nonDefault(tasks.get(0)),
                tasks.get(2).key(), TuningModels.nonDefault(tasks.get(2)));
        ArtifactCompiler.Artifact[] art = new ArtifactCompiler.Artifact[1];
        List<Lowered> seen = observe(() -> art[0] = Stages.codegen(opt, new CompileOptions(HOST, 3, stored), tmp.resolve("a")));
        assertEquals(expected(opt, tasks, stored), seen);
        assertEquals(seen.size(), art[0].kernels().size());
    }

    @Test
    void theAutotunerAndCodegenStagesLowerEachKernelOncePerConfig(@TempDir Path tmp) {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        IRModule opt = TuningModels.optimizedLayers(HOST);
        List<TuningTask> listed = Stages.tasks(opt, HOST);
        List<StoredSchedule> rows = List.of(
                new StoredSchedule(1, listed.get(1).key(), HOST.toString(), Device.UNKNOWN_CLASS, TuningModels.nonDefault(listed.get(1)), ScheduleStatus.PINNED,
                        OptionalDouble.empty(), OptionalDouble.empty()),
                new StoredSchedule(2, listed.get(3).key(), HOST.toString(), Device.UNKNOWN_CLASS, TuningModels.nonDefault(listed.get(3)), ScheduleStatus.PENDING,
                        OptionalDouble.empty(), OptionalDouble.empty()));
        Map<String, ScheduleConfig> chosen = new HashMap<>();
        List<Lowered> seen = observe(() -> {
            // the autotuner stage: tasks and the rule; the codegen stage: the artifact with the chosen configs
            chosen.putAll(ScheduleRule.configs(Stages.tasks(opt, HOST), Device.UNKNOWN_CLASS, rows));
            Stages.codegen(opt, new CompileOptions(HOST, 3, chosen), tmp.resolve("farm"));
        });
        assertEquals(Map.of(listed.get(1).key(), rows.get(0).config()), chosen, "the pin applies, the pending schedule does not");
        assertEquals(expected(opt, listed, chosen), seen);
    }

    /** One lowering per kernel of {@code opt}, in kernel order, with the stored config of its workload or its default. */
    private static List<Lowered> expected(IRModule opt, List<TuningTask> tasks, Map<String, ScheduleConfig> stored) {
        Map<String, ScheduleConfig> byKernel = new HashMap<>();
        for (TuningTask t : tasks) for (String k : t.kernels()) byKernel.put(k, stored.getOrDefault(t.key(), t.defaultConfig()));
        List<Lowered> out = new ArrayList<>();
        for (GraphPlan.Kernel k : GraphBuilder.build(opt).kernels()) out.add(new Lowered(k.name(), byKernel.get(k.name())));
        assertTrue(out.size() >= 6, out.toString());
        return out;
    }
}
