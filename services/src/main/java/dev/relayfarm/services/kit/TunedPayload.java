package dev.relayfarm.services.kit;

import java.util.List;
import java.util.Objects;

/**
 * The payload of ir.tuned (schema {@code ir.tuned.schema.json}): the job's model and options carried forward, plus the
 * schedule chosen for every workload of the optimized module.
 */
public record TunedPayload(JobModel model, JobOptions options, List<ChosenSchedule> schedules) implements Payload {
    public TunedPayload {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(options, "options");
        schedules = List.copyOf(schedules);
    }
}
