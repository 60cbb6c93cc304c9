package dev.relayfarm.tuning.measure;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.TuningTask;
import java.util.List;

/**
 * Measures one round of the {@link dev.relayfarm.tuning.scheduler.Tuner}: candidates of a task together with the task's
 * default, on one device in one batch, so every record carries the baseline it was compared with. The sandboxed runner
 * does it in this process ({@link SandboxedRunner}); a tuner worker sends the batch to a hardware agent, which measures
 * it with the same runner.
 */
public interface BatchMeasurer {
    /**
     * One measurement per config, in order, and the default's; throws {@link BaselineFailedException} when the default
     * itself failed (nothing in the batch can then be checked or compared).
     */
    MeasuredBatch measureWithBaseline(TuningTask task, List<ScheduleConfig> configs);
}
