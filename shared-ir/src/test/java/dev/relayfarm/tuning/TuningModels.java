package dev.relayfarm.tuning;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** A small model with five tuning tasks, one of them shared by two kernels, for the tuning tests. */
public final class TuningModels {
    /** Dense layers of four shapes (the first shape twice: with and without relu), then softmax. */
    public static final String LAYERS = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(1, 64), float32], %w1: Tensor[(64, 64), float32], %w2: Tensor[(64, 64), float32],
                      %w3: Tensor[(32, 64), float32], %w4: Tensor[(16, 32), float32], %w5: Tensor[(8, 16), float32]) {
              %0 = nn.relu(nn.dense(%x, %w1, units=64));
              %1 = nn.dense(%0, %w2, units=64);
              %2 = nn.relu(nn.dense(%1, %w3, units=32));
              %3 = nn.relu(nn.dense(%2, %w4, units=16));
              %4 = nn.dense(%3, %w5, units=8);
              nn.softmax(%4, axis=-1)
            }
            """;

    private TuningModels() {}

    public static ModelSource layers() {
        return ModelSource.of("layers.relay", ModelFormat.RELAY, LAYERS.getBytes(StandardCharsets.UTF_8));
    }

    public static IRModule optimizedLayers(Target target) {
        return optimized(LAYERS, target);
    }

    /** {@code relay}'s module through the real pipeline: import, type inference, -O3 for {@code target}. */
    public static IRModule optimized(String relay, Target target) {
        return optimized(relay, target, 3);
    }

    public static IRModule optimized(String relay, Target target, int optLevel) {
        ModelSource src = ModelSource.of("m.relay", ModelFormat.RELAY, relay.getBytes(StandardCharsets.UTF_8));
        return Stages.optimize(Stages.inferTypes(Stages.importModel(src, "")), optLevel, target);
    }

    /** The host's tuning tasks of {@code relay}'s module at -O{@code optLevel}. */
    public static List<TuningTask> tasks(String relay, int optLevel) {
        return Stages.tasks(optimized(relay, Target.host(), optLevel), Target.host());
    }

    /** The host's task of {@code relay}'s module whose workload key starts with {@code anchor}. */
    public static TuningTask task(String relay, String anchor) {
        List<TuningTask> tasks = tasks(relay, 3);
        return tasks.stream().filter(t -> t.key().startsWith(anchor)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + anchor + " task among " + tasks.stream().map(TuningTask::key).toList()));
    }

    /** A point of the task's space other than its default. */
    public static ScheduleConfig nonDefault(TuningTask task) {
        long last = task.space().size() - 1;
        ScheduleConfig c = task.space().get(last);
        if (c.equals(task.defaultConfig())) c = task.space().get(0);
        if (c.equals(task.defaultConfig())) throw new AssertionError(task.key() + " has a one-point space");
        return c;
    }
}
