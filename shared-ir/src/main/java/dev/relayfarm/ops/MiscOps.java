package dev.relayfarm.ops;

import dev.relayfarm.ops.misc.NonMaxSuppression;
import java.util.List;

/**
 * Operators the ONNX importer needs that fit no other family: data-dependent detection ops
 * (non-maximum suppression, whose result length is known only at run time).
 */
final class MiscOps {
    private MiscOps() {}

    /** Every operator of this family, in registration order (the kernel-coverage test walks this list). */
    static List<OpDef<?>> defs() {
        return List.of(NonMaxSuppression.DEF);
    }

    static void register(OpRegistry.Builder r) {
        for (OpDef<?> def : defs()) r.add(def);
    }
}
