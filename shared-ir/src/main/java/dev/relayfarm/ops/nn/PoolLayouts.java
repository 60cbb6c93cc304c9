package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TypeFormat;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.layout.Layout;
import dev.relayfarm.ops.transform.LayoutTransform;
import java.util.List;

/**
 * The data layouts pooling accepts: any order of the primal axes N, C, H, W, with C optionally split
 * into blocks ({@code NHWC}, {@code NCHW16c}). Pooling works per channel, so channel blocks do not
 * change what it computes, and alter-op-layout can leave pools in the blocked layout of the
 * convolutions around them; splitting H or W would cut pooling windows and is rejected.
 * <pre>
 * parse("nn.max_pool2d", "layout", "NCHW16c")             = NCHW16c
 * toNchw("nn.max_pool2d", NCHW16c, Tensor[(1, 2, 8, 8, 16)]) = (1, 32, 8, 8)
 * </pre>
 * The reference kernels convert to NCHW with {@code layout_transform}'s kernel, pool there, and
 * convert back.
 */
final class PoolLayouts {
    static final Layout NCHW = Layout.parse("NCHW");

    private PoolLayouts() {}

    static Layout parse(String op, String key, String text) {
        Layout l;
        try {
            l = Layout.parse(text);
        } catch (IllegalArgumentException e) {
            l = null;
        }
        if (l == null || !l.primalSet().equals("CHNW") || l.factorOf('N') + l.factorOf('H') + l.factorOf('W') != 0) {
            throw new RelationException(op + ": " + key + " must be a permutation of NCHW, optionally with C split into blocks (NCHW16c), got \"" + text + "\"");
        }
        return l;
    }

    /** The (N, C, H, W) extents of {@code data} held in {@code layout}. */
    static List<Dim> toNchw(String op, Layout layout, TensorType data) {
        if (data.rank() != layout.rank()) {
            throw new RelationException(op + ": data must have rank " + layout.rank() + " for layout " + layout + ", got " + TypeFormat.format(data));
        }
        try {
            return Layout.convertShape(layout, data.shape(), NCHW);
        } catch (IllegalArgumentException e) {
            throw new RelationException(op + ": data " + Rel.shape(data.shape()) + ": " + e.getMessage());
        }
    }

    /** The shape in {@code layout} of an (N, C, H, W) result. */
    static List<Dim> fromNchw(String op, List<Dim> nchw, Layout layout) {
        try {
            return Layout.convertShape(NCHW, nchw, layout);
        } catch (IllegalArgumentException e) {
            throw new RelationException(op + ": output in " + layout + ": " + e.getMessage());
        }
    }

    /** {@code x} (in layout {@code from}) in layout {@code to}, by {@code layout_transform}'s kernel. */
    static NDArray convert(NDArray x, Layout from, Layout to) {
        if (from.equals(to)) return x;
        Attrs attrs = Attrs.of("src_layout", AttrValue.of(from.name())).with("dst_layout", AttrValue.of(to.name()));
        return LayoutTransform.DEF.compute(List.of(x), attrs).getFirst();
    }
}
