package dev.relayfarm.ops.misc;

import dev.relayfarm.ops.OpDef;
import java.util.List;

/**
 * Operators the ONNX importer needs that fit no other family: data-dependent detection ops
 * (non-maximum suppression, whose result length is known only at run time).
 */
public final class MiscOps {
    private MiscOps() {}

    /** Every operator of this family, in registration order (the kernel-coverage test walks this list). */
    public static List<OpDef<?>> defs() {
        return List.of(NonMaxSuppression.DEF);
    }

}
