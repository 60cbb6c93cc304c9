package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.te.Compute;
import java.util.List;

/** Helpers the templates share for placing the anchor's accumulation tile and naming its loops. */
final class Tiles {
    private Tiles() {}

    /**
     * The stage that accumulates the anchor's tile: when {@code out} is the anchor, a cache_write
     * copy ({@code <anchor>_local}); otherwise the anchor itself, computed at the epilogue's tile.
     */
    static String cacheOrAttach(List<Primitive> ps, Compute anchor, Compute out) {
        if (out.id() == anchor.id()) {
            ps.add(new Primitive.CacheWrite(anchor.name()));
            return anchor.name() + "_local";
        }
        if (!out.shape().equals(anchor.shape())) {
            throw new IllegalArgumentException("epilogue output " + out.name() + out.shape() + " does not have the shape of anchor " + anchor.name() + anchor.shape());
        }
        return anchor.name();
    }

    /** Fuses adjacent leaf axes {@code axes} (outermost first) into one; its name, or null when there are none. */
    static String fuseAll(List<Primitive> ps, String stage, List<String> axes) {
        if (axes.isEmpty()) return null;
        String fused = axes.getFirst();
        for (int i = 1; i < axes.size(); i++) {
            ps.add(new Primitive.Fuse(stage, fused, axes.get(i)));
            fused = fused + "_" + axes.get(i) + "_f";
        }
        return fused;
    }

    /** Fuses {@code axes} as {@link #fuseAll} does (at least one) and runs the fused loop across threads; its name. */
    static String parallelFused(List<Primitive> ps, String stage, List<String> axes) {
        String fused = fuseAll(ps, stage, axes);
        ps.add(new Primitive.Parallel(stage, fused));
        return fused;
    }

    /** The names of {@code c}'s data axes, outermost first: the leaf axes a schedule starts from. */
    static List<String> axisNames(Compute c) {
        return c.axes().stream().map(IterVar::name).toList();
    }
}
