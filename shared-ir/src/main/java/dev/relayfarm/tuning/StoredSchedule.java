package dev.relayfarm.tuning;

import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * A schedule someone stored for a workload: a row of the farm's {@code schedules} table or a line of a
 * schedules file ({@link ScheduleLog}). {@code id} is the row's id, or the line's number. {@code target}
 * is the target string the schedule was tuned for, standing for the device class both costs were measured
 * on: {@code costUs} the schedule's, {@code defaultCostUs} the template default's on the same device
 * (microseconds, empty when not measured). Which one applies is {@link ScheduleRule}'s decision.
 */
public record StoredSchedule(long id, String workloadKey, String target, ScheduleConfig config, ScheduleStatus status, OptionalDouble costUs,
                             OptionalDouble defaultCostUs) {
    public StoredSchedule {
        Objects.requireNonNull(workloadKey, "workloadKey");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(costUs, "costUs");
        Objects.requireNonNull(defaultCostUs, "defaultCostUs");
    }

    /** Whether it was measured slower than the template default (both costs known, on the same device). */
    public boolean slowerThanDefault() {
        return costUs.isPresent() && defaultCostUs.isPresent() && costUs.getAsDouble() > defaultCostUs.getAsDouble();
    }
}
