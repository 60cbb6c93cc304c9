package dev.relayfarm.services.kit;

import java.util.Objects;

/**
 * The payload of compile.requested, ir.imported, ir.typed and ir.optimized (schema {@code compile.requested.schema.json}):
 * the job's model and options; the gateway sends them, every stage carries them forward.
 */
public record JobPayload(JobModel model, JobOptions options) implements Payload {
    public JobPayload {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(options, "options");
    }
}
