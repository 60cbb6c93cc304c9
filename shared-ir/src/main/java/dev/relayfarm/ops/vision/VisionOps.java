package dev.relayfarm.ops.vision;

import dev.relayfarm.ops.OpDef;
import java.util.List;

/**
 * Vision operators ({@code vision.*}, as Relay names them): detection post-processing such as non-maximum
 * suppression, whose result length is known only at run time.
 */
public final class VisionOps {
    private VisionOps() {}

    /** Every operator of this family, in registration order (the kernel-coverage test walks this list). */
    public static List<OpDef<?>> defs() {
        return List.of(NonMaxSuppression.DEF);
    }
}
