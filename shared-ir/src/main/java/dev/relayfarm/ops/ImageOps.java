package dev.relayfarm.ops;

import dev.relayfarm.ops.image.Resize2D;
import java.util.List;

/** Image operators (image.resize2d). */
final class ImageOps {
    private ImageOps() {}

    /** Every image operator, in registration order (the kernel-coverage test walks this list). */
    static List<OpDef<?>> defs() {
        return List.of(Resize2D.def());
    }

    static void register(OpRegistry.Builder r) {
        for (OpDef<?> def : defs()) r.add(def);
    }
}
