package dev.relayfarm.services.kit;

import java.util.Objects;

/**
 * The job's options as the gateway sent them (schema {@code compile.requested.schema.json#/$defs/options}).
 *
 * @param shapes comma-joined {@code NAME=D0xD1x...} bindings of dynamic input dims, empty for none
 */
public record JobOptions(String target, int optLevel, String shapes) {
    public JobOptions {
        Objects.requireNonNull(target, "options.target");
        Objects.requireNonNull(shapes, "options.shapes");
    }
}
