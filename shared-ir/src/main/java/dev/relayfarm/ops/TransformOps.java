package dev.relayfarm.ops;

import dev.relayfarm.ops.transform.Arange;
import dev.relayfarm.ops.transform.BroadcastTo;
import dev.relayfarm.ops.transform.Concatenate;
import dev.relayfarm.ops.transform.Copy;
import dev.relayfarm.ops.transform.ExpandDims;
import dev.relayfarm.ops.transform.Fill;
import dev.relayfarm.ops.transform.Gather;
import dev.relayfarm.ops.transform.GatherNd;
import dev.relayfarm.ops.transform.LayoutTransform;
import dev.relayfarm.ops.transform.OneHot;
import dev.relayfarm.ops.transform.Reinterpret;
import dev.relayfarm.ops.transform.Reshape;
import dev.relayfarm.ops.transform.ReshapeLike;
import dev.relayfarm.ops.transform.Reverse;
import dev.relayfarm.ops.transform.ShapeOf;
import dev.relayfarm.ops.transform.Split;
import dev.relayfarm.ops.transform.Squeeze;
import dev.relayfarm.ops.transform.Stack;
import dev.relayfarm.ops.transform.StridedSlice;
import dev.relayfarm.ops.transform.Take;
import dev.relayfarm.ops.transform.Tile;
import dev.relayfarm.ops.transform.Transpose;
import java.util.List;

/**
 * Shape and data-movement operators (reshape, transpose, concatenate, take, arange, ...). Each
 * operator lives in its own class in {@code dev.relayfarm.ops.transform}; this list is the family's
 * single registration point (and what the tests check for kernel coverage).
 */
final class TransformOps {
    private TransformOps() {}

    static List<OpDef<?>> definitions() {
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
                Fill.ZEROS,
                Fill.ONES,
                Fill.FULL,
                Fill.ZEROS_LIKE,
                Fill.ONES_LIKE,
                Fill.FULL_LIKE,
                Reinterpret.DEF);
    }

    static void register(OpRegistry.Builder r) {
        for (OpDef<?> def : definitions()) r.add(def);
    }
}
