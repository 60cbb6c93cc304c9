package dev.relayfarm.tuning.measure;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.TuningTasks;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Real tuning tasks for the runner's tests: small Relay modules through the real pipeline (import, infer, -O3, tasks). */
final class MeasureModels {
    /** One dense + relu kernel: a reduction of 128 terms, so configs reorder real float sums. */
    static final String DENSE_RELU = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(4, 128), float32], %w: Tensor[(64, 128), float32]) {
              nn.relu(nn.dense(%x, %w, units=64))
            }
            """;

    /** One conv2d + relu kernel (3×3, 8 → 16 channels). */
    static final String CONV_RELU = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(1, 8, 16, 16), float32], %w: Tensor[(16, 8, 3, 3), float32]) {
              nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]))
            }
            """;

    private MeasureModels() {}

    /** The task of {@code relay}'s module for the host whose workload key starts with {@code anchor}. */
    static TuningTask task(String relay, String anchor) {
        ModelSource src = ModelSource.of("m.relay", ModelFormat.RELAY, relay.getBytes(StandardCharsets.UTF_8));
        IRModule opt = Stages.optimize(Stages.inferTypes(Stages.importModel(src, "")), 3, Target.host());
        List<TuningTask> tasks = Stages.tasks(opt, Target.host());
        return tasks.stream().filter(t -> t.key().startsWith(anchor)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + anchor + " task among " + tasks.stream().map(TuningTask::key).toList()));
    }

    static TuningTask dense() {
        return task(DENSE_RELU, "nn.dense");
    }

    static TuningTask conv() {
        return task(CONV_RELU, "nn.contrib_conv2d");
    }

    /** Up to {@code n} configs of the task's space other than its default, spread over the space. */
    static List<ScheduleConfig> others(TuningTask task, int n) {
        List<ScheduleConfig> out = new ArrayList<>();
        long size = task.space().size();
        for (int i = 0; i < n * 16 && out.size() < n; i++) {
            ScheduleConfig c = task.space().get((i * 7919L + size / 3) % size);
            // points the template refuses (tiles too large for the registers) are not candidates to measure here
            if (!c.equals(task.defaultConfig()) && !out.contains(c) && accepted(task, c)) out.add(c);
        }
        return out;
    }

    private static boolean accepted(TuningTask task, ScheduleConfig c) {
        try {
            TuningTasks.lower(task, c);
            return true;
        } catch (InvalidConfigException e) {
            return false;
        }
    }
}
