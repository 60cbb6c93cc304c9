package dev.relayfarm.ops.image;

import dev.relayfarm.ops.OpDef;
import java.util.List;

/** Image operators (image.resize2d, image.grid_sample). */
public final class ImageOps {
    private ImageOps() {}

    /** Every image operator, in registration order (the kernel-coverage test walks this list). */
    public static List<OpDef<?>> defs() {
        return List.of(Resize2D.def(), GridSample.def());
    }

}
