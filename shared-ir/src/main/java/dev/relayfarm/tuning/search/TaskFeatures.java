package dev.relayfarm.tuning.search;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.TuningTasks;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The {@link LoopNestFeatures} of a task's configurations by index, each lowered once and remembered (a search asks
 * for the same neighbours again and again). A configuration that lowering refuses ({@code InvalidConfigException},
 * or an {@code UnsupportedOperationException} for a form the loop lowering does not cover) has no features: it is
 * invalid for this workload and would only come back from the runner as a COMPILE_ERROR. Not thread-safe: one
 * search owns it.
 */
public final class TaskFeatures {
    private final TuningTask task;
    private final Map<Long, Optional<float[]>> byIndex = new HashMap<>();

    public TaskFeatures(TuningTask task) {
        this.task = task;
    }

    public TuningTask task() {
        return task;
    }

    /** The features of configuration {@code index} of the task's space, or empty when it does not lower. */
    public Optional<float[]> of(long index) {
        return byIndex.computeIfAbsent(index, i -> lower(task.space().get(i)));
    }

    /** The features of {@code config} (of the task's space or not), or empty when it does not lower. */
    public Optional<float[]> of(ScheduleConfig config) {
        return lower(config);
    }

    private Optional<float[]> lower(ScheduleConfig config) {
        try {
            return Optional.of(LoopNestFeatures.of(TuningTasks.lower(task, config).func()));
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            // InvalidConfigException is an IllegalArgumentException: the config does not fit the workload
            return Optional.empty();
        }
    }
}
