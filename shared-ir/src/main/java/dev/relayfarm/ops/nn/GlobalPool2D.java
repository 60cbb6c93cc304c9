package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.TypeReporter;
import dev.relayfarm.ops.layout.Layout;
import java.util.List;

/**
 * {@code nn.global_avg_pool2d} / {@code nn.global_max_pool2d(data, layout="NCHW", out_layout="")}: H and
 * W become 1. The layouts are any order of N, C, H, W with C optionally blocked ({@link PoolLayouts}).
 */
public final class GlobalPool2D {
    private GlobalPool2D() {}

    public record GlobalPool2DAttrs(Layout layout, Layout outLayout) {}

    public static OpDef<GlobalPool2DAttrs> avg() {
        return def("nn.global_avg_pool2d", false);
    }

    public static OpDef<GlobalPool2DAttrs> max() {
        return def("nn.global_max_pool2d", true);
    }

    private static OpDef<GlobalPool2DAttrs> def(String name, boolean max) {
        return new OpDef<>(name, 1, attrs -> parse(name, attrs), (types, n, a, rep) -> relation(name, types, a, rep),
                OpPattern.OUT_ELEMWISE_FUSABLE, (in, a) -> List.of(compute(in.get(0), a, max)));
    }

    static GlobalPool2DAttrs parse(String op, Attrs attrs) {
        AttrReader r = new AttrReader(op, attrs);
        String layout = r.string("layout", "NCHW");
        String outLayout = r.string("out_layout", "");
        r.finish();
        Layout l = PoolLayouts.parse(op, "layout", layout);
        return new GlobalPool2DAttrs(l, outLayout.isEmpty() ? l : PoolLayouts.parse(op, "out_layout", outLayout));
    }

    static boolean relation(String op, List<Type> types, GlobalPool2DAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(op, "data", types.get(0));
        if (data == null) return false;
        List<Dim> d = PoolLayouts.toNchw(op, a.layout(), data);
        reporter.assign(types.get(1), new TensorType(PoolLayouts.fromNchw(op, List.of(d.get(0), d.get(1), Dim.of(1), Dim.of(1)), a.outLayout()), data.dtype()));
        return true;
    }

    static NDArray compute(NDArray input, GlobalPool2DAttrs a, boolean max) {
        NDArray x = PoolLayouts.convert(input, a.layout(), PoolLayouts.NCHW);
        int planes = x.dim(0) * x.dim(1), hw = x.dim(2) * x.dim(3);
        double[] v = Arrays2.doubles(x);
        double[] out = new double[planes];
        for (int p = 0; p < planes; p++) {
            double acc = max ? (hw == 0 ? Pool2D.lowest(x.dtype()) : Double.NEGATIVE_INFINITY) : 0;
            for (int i = 0; i < hw; i++) acc = max ? Math.max(acc, v[p * hw + i]) : acc + v[p * hw + i];
            out[p] = max ? acc : acc / Math.max(1, hw);
        }
        NDArray res = Arrays2.fromDoubles(x.dtype(), new int[] {x.dim(0), x.dim(1), 1, 1}, out);
        return PoolLayouts.convert(res, PoolLayouts.NCHW, a.outLayout());
    }
}
