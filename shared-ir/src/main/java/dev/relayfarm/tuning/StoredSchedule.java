package dev.relayfarm.tuning;

import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * A schedule someone stored for a workload: a row of the farm's {@code schedules} table or a line of a
 * schedules file ({@link ScheduleLog}), or the best tuning record of a workload. {@code id} is the row's id, or the
 * line's number. {@code target} is the target string the schedule was tuned for, {@code deviceClass} the
 * {@link Device#deviceClass() device class} both costs were measured on: {@code costUs} the schedule's,
 * {@code defaultCostUs} the template default's on the same device (microseconds, empty when not measured). The
 * farm's rows from before schedules had a device class carry {@link Device#UNKNOWN_CLASS}. Which one applies is
 * {@link ScheduleRule}'s decision.
 */
public record StoredSchedule(long id, String workloadKey, String target, String deviceClass, ScheduleConfig config, ScheduleStatus status,
                             OptionalDouble costUs, OptionalDouble defaultCostUs) {
    public StoredSchedule {
        Objects.requireNonNull(workloadKey, "workloadKey");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(deviceClass, "deviceClass");
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
