package dev.relayfarm.services.kit;

import java.util.Objects;

/**
 * The job's options as the gateway sent them (schema {@code compile.requested.schema.json#/$defs/options}).
 *
 * @param shapes comma-joined {@code NAME=D0xD1x...} bindings of dynamic input dims, empty for none
 * @param tune   {@link TuneOption} as text: off, apply or budget=DURATION
 */
public record JobOptions(String target, int optLevel, String shapes, String tune) {
    public JobOptions {
        Objects.requireNonNull(target, "options.target");
        Objects.requireNonNull(shapes, "options.shapes");
        tune = TuneOption.parse(Objects.requireNonNull(tune, "options.tune")).toString();
    }

    /** Options with {@code tune=apply}, the behaviour of jobs before the option. */
    public JobOptions(String target, int optLevel, String shapes) {
        this(target, optLevel, shapes, TuneOption.APPLY.toString());
    }

    public TuneOption tuneOption() {
        return TuneOption.parse(tune);
    }
}
