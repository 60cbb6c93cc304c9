package dev.relayfarm.ops.transform;

import dev.relayfarm.ops.OpDef;
import java.util.List;

/**
 * Shape and data-movement operators (reshape, transpose, concatenate, take, arange, ...). Each
 * operator lives in its own class in {@code dev.relayfarm.ops.transform}; this list is the family's
 * single registration point (and what the tests check for kernel coverage).
 */
public final class TransformOps {
    private TransformOps() {}

    public static List<OpDef<?>> defs() {
        return List.of(
                Reshape.DEF,
                Transpose.DEF,
                Concatenate.DEF,
                Squeeze.DEF,
                ExpandDims.DEF,
                StridedSlice.DEF,
                Take.DEF,
                Split.DEF,
                Gather.DEF,
                BroadcastTo.DEF,
                Tile.DEF,
                Stack.DEF,
                Reverse.DEF,
                LayoutTransform.DEF,
                Arange.DEF,
                ShapeOf.DEF,
                OneHot.DEF,
                Copy.DEF,
                ReshapeLike.DEF,
                GatherNd.DEF,
                ScatterElements.DEF,
                ScatterNd.DEF,
                Fill.ZEROS,
                Fill.ONES,
                Fill.FULL,
                Fill.ZEROS_LIKE,
                Fill.ONES_LIKE,
                Fill.FULL_LIKE,
                Reinterpret.DEF);
    }

}
