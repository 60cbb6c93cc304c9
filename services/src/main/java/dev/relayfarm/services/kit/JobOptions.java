package dev.relayfarm.services.kit;

import dev.relayfarm.quantize.Precision;
import java.util.Objects;

/**
 * The job's options as the gateway sent them (schema {@code compile.requested.schema.json#/$defs/options}).
 *
 * @param shapes comma-joined {@code NAME=D0xD1x...} bindings of dynamic input dims, empty for none
 * @param tune   {@link TuneOption} as text: off, apply or budget=DURATION
 * @param quantize the {@link Precision} as text, float or int8; null (a message from before the option) is float
 */
public record JobOptions(String target, int optLevel, String shapes, String tune, String quantize) {
    public JobOptions {
        Objects.requireNonNull(target, "options.target");
        Objects.requireNonNull(shapes, "options.shapes");
        tune = TuneOption.parse(Objects.requireNonNull(tune, "options.tune")).toString();
        quantize = quantize == null ? Precision.FLOAT.wireName : Precision.parse(quantize).wireName;
    }

    /** Options with {@code tune=apply}, the behaviour of jobs before the option, in float. */
    public JobOptions(String target, int optLevel, String shapes) {
        this(target, optLevel, shapes, TuneOption.APPLY.toString(), Precision.FLOAT.wireName);
    }

    public Precision precision() {
        return Precision.parse(quantize);
    }

    public TuneOption tuneOption() {
        return TuneOption.parse(tune);
    }
}
