package dev.relayfarm.tuning;

import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.List;

/**
 * Measures candidates of one task on one device: the library's sandboxed runner in one process, a hardware agent in
 * the farm. One {@link Measurement} per config, in the order given; a failing candidate is a {@link Measurement.Failure},
 * never an exception. Only a batch whose reference (the task's default, measured with it) fails as a whole is refused
 * with an exception: nothing in it could be checked or compared.
 */
public interface Measurer {
    List<Measurement> measure(TuningTask task, List<ScheduleConfig> configs);
}
