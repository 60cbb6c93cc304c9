package dev.relayfarm.tuning.measure;

import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.TuningTasks;
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

    static TuningTask dense() {
        return TuningModels.task(DENSE_RELU, "nn.dense");
    }

    static TuningTask conv() {
        return TuningModels.task(CONV_RELU, "nn.contrib_conv2d");
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
