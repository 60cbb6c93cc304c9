package dev.relayfarm.services.kit;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.relayfarm.kernel.template.ScheduleConfig;
import java.util.Objects;

/**
 * The schedule the autotuner chose for one workload of the module (schema {@code ir.tuned.schema.json#/properties/schedules}).
 *
 * @param workload   the kernel's tuning key (anchor template + shapes)
 * @param scheduleId {@code schedules.id} when {@code source} is {@link Source#STORED}, else null
 */
public record ChosenSchedule(String workload, String template, ScheduleConfig config, Source source, Long scheduleId) {
    /**
     * Where the config came from: the farm's stored schedules (approved or pinned), the job's own tuning on the farm
     * ({@code tune=budget}: the best record that beat the default, not reviewed yet), or the template's default.
     */
    public enum Source {
        @JsonProperty("stored") STORED,
        @JsonProperty("tuned") TUNED,
        @JsonProperty("default") DEFAULT
    }

    public ChosenSchedule {
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(template, "template");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(source, "source");
        if ((source == Source.STORED) != (scheduleId != null)) {
            throw new IllegalArgumentException("scheduleId is given exactly for a stored schedule, got " + source + " with " + scheduleId);
        }
    }
}
