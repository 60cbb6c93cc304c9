package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import java.util.List;

/**
 * A schedule template for one anchor compute (TVM's AutoTVM template): a parameterized schedule whose
 * named knobs span an enumerable {@link ConfigSpace} for the workload's shapes, a sound default
 * configuration, and a check that rejects configurations that do not fit the shapes.
 *
 * <p>The template schedules its own stages (the anchor and its helpers: padding, packing) and the
 * loop tiling of {@code out}, the stage whose buffer receives the result: the anchor itself (its
 * accumulation then goes through a local cache_write tile), or the last stage of a fused element-wise
 * epilogue with the anchor's shape, into whose tile loop the anchor is computed (so the anchor's
 * result only ever lives in a register-sized tile).
 */
public interface ScheduleTemplate {
    /** The template's name, the key of its configurations ({@code conv2d_NCHWc.x86}). */
    String name();

    /** The anchor operator and its shapes: the tuning key. */
    String workload();

    ConfigSpace space();

    ScheduleConfig defaultConfig();

    /** The anchor compute (whose shape an epilogue output must have). */
    Compute anchor();

    /** The stages this template schedules itself: the anchor and its helpers. */
    List<Compute> stages();

    /**
     * Throws {@link InvalidConfigException} naming the knob and the constraint when {@code config}
     * does not fit this workload; returns normally otherwise.
     */
    void validate(ScheduleConfig config);

    /** The primitives for the template's stages and {@code out}'s tiling under a valid {@code config}. */
    Schedule schedule(ScheduleConfig config, Compute out);

    /** Divisors of {@code n} in {@code [1, max]}, ascending. */
    static List<Integer> divisors(int n, int max) {
        List<Integer> out = new java.util.ArrayList<>();
        for (int d = 1; d <= Math.min(n, max); d++) if (n % d == 0) out.add(d);
        return out;
    }
}
