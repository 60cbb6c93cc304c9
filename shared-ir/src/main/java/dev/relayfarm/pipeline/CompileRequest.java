package dev.relayfarm.pipeline;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.passes.OptLevels;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a user asks to compile to an artifact: the model, the target, the {@code -O} level and the shapes that bind
 * the model's dynamic input dims. {@code relayc compile} builds one from its arguments, the gateway from a submit's
 * fields; the stages read its fields. The defaults and the valid opt levels of a compile are written here once.
 *
 * @param shapes bindings checked by {@link InputShapes}, in the order given; empty for none (and for Relay text,
 *     where shapes do not apply: {@link Stages#importModel} rejects them)
 */
public record CompileRequest(ModelSource model, Target target, int optLevel, Map<String, List<Long>> shapes) {
    /** The target when none is given: C code for the CPU that compiles it. */
    public static final String DEFAULT_TARGET = Target.HOST;
    /** The opt level when none is given: every pass. */
    public static final int DEFAULT_OPT_LEVEL = 3;
    /**
     * The opt levels a compile to an artifact accepts: the graph executor runs fused kernels, so not -O0 (which
     * {@link Stages#optimize} alone accepts, {@link OptLevels#PIPELINE}).
     */
    public static final OptLevels OPT_LEVELS = OptLevels.FUSED;
    /** The diagnostic code of an opt level out of range. */
    public static final String INVALID_OPT_LEVEL = "invalid-opt-level";

    public CompileRequest {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(target, "target");
        if (!OPT_LEVELS.contains(optLevel)) {
            throw new ModelInputException(INVALID_OPT_LEVEL, "opt level must be " + OPT_LEVELS + " for an artifact (the graph executor runs fused kernels), got " + optLevel);
        }
        shapes = Collections.unmodifiableMap(new LinkedHashMap<>(shapes));
    }

    /** How to generate the artifact: this request's target and opt level, with {@code schedules} by workload. */
    public CompileOptions compileOptions(Map<String, ScheduleConfig> schedules) {
        return new CompileOptions(target, optLevel, schedules);
    }
}
