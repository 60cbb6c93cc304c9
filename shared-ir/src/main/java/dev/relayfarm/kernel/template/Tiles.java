package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
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

    /**
     * The padding stage of a convolution on channel-blocked data {@code [N, C/c, H, W, c]}: {@code [N, C/c, height, width, c]}
     * with the input at ({@code top}, {@code left}) and zeros around it, named {@code name + "_pad"}, axes
     * {@code pn, pc, ph, pw, pb} (what the templates' schedules address).
     */
    static Compute padBlocked(Tensor data, String name, int height, int width, int top, int left) {
        List<Integer> ds = data.shape();
        int h = ds.get(2), w = ds.get(3);
        return Te.compute(name + "_pad", List.of(ds.get(0), ds.get(1), height, width, ds.get(4)), List.of("pn", "pc", "ph", "pw", "pb"), ix -> {
            PrimExpr y = ix.get(2).sub(top), x = ix.get(3).sub(left);
            PrimExpr inside = y.ge(0).and(y.lt(PrimExpr.of(h))).and(x.ge(0)).and(x.lt(PrimExpr.of(w)));
            if (data instanceof Compute) {
                // data computed in the kernel (an injective producer fused in, inlined here): read it at the row and column
                // clamped into the image, whose bounds let the simplifier reduce the producer's divisions and remainders
                // of the flattened index (the select discards what is read outside)
                y = y.max(PrimExpr.of(0)).min(PrimExpr.of(h - 1));
                x = x.max(PrimExpr.of(0)).min(PrimExpr.of(w - 1));
            }
            return new Select(inside, data.at(ix.get(0), ix.get(1), y, x, ix.get(4)), Te.zero(data.dtype()));
        });
    }

    /** The names of {@code c}'s data axes, outermost first: the leaf axes a schedule starts from. */
    static List<String> axisNames(Compute c) {
        return c.axes().stream().map(IterVar::name).toList();
    }
}
