package dev.relayfarm.vta.tuning;

import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.measure.BaselineFailedException;
import dev.relayfarm.tuning.measure.MeasuredBatch;
import java.util.List;

/**
 * Measures schedules of one VTA layer task with the task's default in the same batch, as the CPU's
 * {@code BatchMeasurer} does for kernels: the {@link SimulatorMeasurer} in one process, a tuner worker's remote
 * measurer (a hardware agent of class {@code vta-sim-...}) in the farm. One measurement per config in the order given;
 * a failing schedule is a {@code Measurement.Failure}, never an exception; a batch whose default fails is a
 * {@link BaselineFailedException}.
 */
@FunctionalInterface
public interface LayerMeasurer {
    MeasuredBatch measureWithBaseline(VtaLayerTask task, List<ScheduleConfig> configs);
}
