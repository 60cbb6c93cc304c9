package dev.relayfarm.kernel.compute;

import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.ops.layout.Layout;
import java.util.ArrayList;
import java.util.List;

/**
 * The (n, c, h, w) meaning of an element index of a tensor held in a layout that orders N, C, H, W
 * freely and may split C into blocks ({@code NHWC}, {@code NCHW16c}), and the way back to an index in
 * another such layout. Keeps the channel as block and lane when the layout is blocked, so reading a
 * tensor in the same blocking needs no division ({@code c / 16}, {@code c % 16} only appear when the
 * blockings differ).
 * <pre>
 * NchwIndex.of(NCHW16c, [i0, i1, i2, i3, i4]).at(NCHW16c, h, w)  = [i0, i1, h, w, i4]
 * NchwIndex.of(NCHW16c, [i0, i1, i2, i3, i4]).at(NHWC, h, w)     = [i0, h, w, i1 * 16 + i4]
 * </pre>
 *
 * @param block the channel block of the layout read from (0 when C is not split)
 */
record NchwIndex(PrimExpr n, PrimExpr cOuter, PrimExpr cInner, int block, PrimExpr h, PrimExpr w) {
    static NchwIndex of(Layout layout, List<? extends PrimExpr> index) {
        int f = layout.factorOf('C');
        return new NchwIndex(index.get(layout.indexOf('N')), index.get(layout.indexOf('C')), f == 0 ? null : index.get(layout.subIndexOf('C')), f,
                index.get(layout.indexOf('H')), index.get(layout.indexOf('W')));
    }

    /** The full channel index. */
    PrimExpr c() {
        return block == 0 ? cOuter : cOuter.mul(block).add(cInner);
    }

    /** The index of element (n, c, {@code h}, {@code w}) in {@code layout}. */
    List<PrimExpr> at(Layout layout, PrimExpr h, PrimExpr w) {
        int f = layout.factorOf('C');
        List<PrimExpr> out = new ArrayList<>();
        for (Layout.Axis a : layout.axes()) {
            out.add(switch (a.primal()) {
                case 'N' -> n;
                case 'H' -> h;
                case 'W' -> w;
                case 'C' -> {
                    if (f == block) yield a.isPrimal() ? cOuter : cInner;
                    if (f == 0) yield c();
                    yield a.isPrimal() ? c().div(f) : c().mod(f);
                }
                default -> throw new IllegalArgumentException("layout " + layout + " has an axis " + a + " besides N, C, H, W");
            });
        }
        return out;
    }
}
