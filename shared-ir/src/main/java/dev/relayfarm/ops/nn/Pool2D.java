package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import dev.relayfarm.ops.layout.Layout;
import java.util.List;

/**
 * {@code nn.max_pool2d} / {@code nn.avg_pool2d(data, pool_size, strides=[1, 1], dilation=[1, 1],
 * padding=[0, 0], layout="NCHW", out_layout="", ceil_mode=False[, count_include_pad=False])}, with
 * TVM's (TOPI's) semantics: padding counts as -inf for max; for avg the divisor is the number of
 * window positions inside the input (or inside input + padding with count_include_pad, never the
 * extra ceil_mode cells); a window with no valid position gives the dtype's lowest value (max) or 0 (avg).
 * The layouts are any order of N, C, H, W with C optionally blocked ({@link PoolLayouts}):
 * {@code max_pool2d(Tensor[(1, 2, 8, 8, 16)], pool_size=[2, 2], strides=[2, 2], layout="NCHW16c")
 * : Tensor[(1, 2, 4, 4, 16)]}.
 */
public final class Pool2D {
    private Pool2D() {}

    /** {@code padding} is {top, left, bottom, right}. */
    public record Pool2DAttrs(int[] poolSize, int[] strides, int[] dilation, int[] padding, Layout layout, Layout outLayout,
                              boolean ceilMode, boolean countIncludePad) {}

    public static OpDef<Pool2DAttrs> maxPool() {
        return def("nn.max_pool2d", true);
    }

    public static OpDef<Pool2DAttrs> avgPool() {
        return def("nn.avg_pool2d", false);
    }

    private static OpDef<Pool2DAttrs> def(String name, boolean max) {
        return new OpDef<>(name, 1, attrs -> parse(name, attrs, max), (types, n, a, rep) -> relation(name, types, a, rep),
                OpPattern.OUT_ELEMWISE_FUSABLE, (in, a) -> List.of(compute(name, in.get(0), a, max)));
    }

    static Pool2DAttrs parse(String op, Attrs attrs, boolean max) {
        AttrReader r = new AttrReader(op, attrs);
        if (!r.has("pool_size")) throw new RelationException(op + ": attribute 'pool_size' is required");
        int[] poolSize = Rel.pair(op, "pool_size", r.ints("pool_size"));
        int[] strides = Rel.pair(op, "strides", r.ints("strides", 1, 1));
        int[] dilation = Rel.pair(op, "dilation", r.ints("dilation", 1, 1));
        int[] padding = Rel.pad4(op, "padding", r.ints("padding", 0, 0));
        String layout = r.string("layout", "NCHW");
        String outLayout = r.string("out_layout", "");
        boolean ceil = r.bool("ceil_mode", false);
        boolean countPad = !max && r.bool("count_include_pad", false);
        r.finish();
        Rel.positive(op, "pool_size", poolSize);
        Rel.positive(op, "strides", strides);
        Rel.positive(op, "dilation", dilation);
        Rel.nonNegative(op, "padding", padding);
        Layout l = PoolLayouts.parse(op, "layout", layout);
        return new Pool2DAttrs(poolSize, strides, dilation, padding, l,
                outLayout.isEmpty() ? l : PoolLayouts.parse(op, "out_layout", outLayout), ceil, countPad);
    }

    static boolean relation(String op, List<Type> types, Pool2DAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(op, "data", types.get(0));
        if (data == null) return false;
        List<Dim> d = PoolLayouts.toNchw(op, a.layout(), data);
        Dim oh = PoolWindows.outDim(op, "height", d.get(2), a.poolSize()[0], a.strides()[0], a.padding()[0], a.padding()[2], a.dilation()[0], a.ceilMode());
        Dim ow = PoolWindows.outDim(op, "width", d.get(3), a.poolSize()[1], a.strides()[1], a.padding()[1], a.padding()[3], a.dilation()[1], a.ceilMode());
        reporter.assign(types.get(1), new TensorType(PoolLayouts.fromNchw(op, List.of(d.get(0), d.get(1), oh, ow), a.outLayout()), data.dtype()));
        return true;
    }

    static NDArray compute(String op, NDArray input, Pool2DAttrs a, boolean max) {
        NDArray x = PoolLayouts.convert(input, a.layout(), PoolLayouts.NCHW);
        int n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
        int kh = a.poolSize()[0], kw = a.poolSize()[1], sh = a.strides()[0], sw = a.strides()[1];
        int dh = a.dilation()[0], dw = a.dilation()[1];
        int pt = a.padding()[0], pl = a.padding()[1], pb = a.padding()[2], pr = a.padding()[3];
        int oh = (int) PoolWindows.outLength(h, kh, sh, pt, pb, dh, a.ceilMode()), ow = (int) PoolWindows.outLength(w, kw, sw, pl, pr, dw, a.ceilMode());
        double[] v = Arrays2.doubles(x);
        double[] out = new double[n * c * oh * ow];
        double lowest = lowest(x.dtype());
        int planes = n * c;
        Parallel.forEach(planes, (long) out.length * kh * kw, p -> {
            int xb = p * h * w, ob = p * oh * ow;
            for (int y = 0; y < oh; y++) {
                int y0 = y * sh - pt;
                for (int xx = 0; xx < ow; xx++) {
                    int x0 = xx * sw - pl;
                    double acc = max ? Double.NEGATIVE_INFINITY : 0;
                    int valid = 0;
                    for (int r = 0; r < kh; r++) {
                        int ih = y0 + r * dh;
                        if (ih < 0 || ih >= h) continue;
                        for (int s = 0; s < kw; s++) {
                            int iw = x0 + s * dw;
                            if (iw < 0 || iw >= w) continue;
                            double e = v[xb + ih * w + iw];
                            acc = max ? Math.max(acc, e) : acc + e;
                            valid++;
                        }
                    }
                    double result;
                    if (max) result = valid == 0 ? lowest : acc;
                    else result = acc / PoolWindows.avgDivisor(y0, x0, kh, kw, dh, dw, h, w, pb, pr, a.countIncludePad());
                    out[ob + y * ow + xx] = result;
                }
            }
        });
        NDArray res = Arrays2.fromDoubles(x.dtype(), new int[] {n, c, oh, ow}, out);
        return PoolLayouts.convert(res, PoolLayouts.NCHW, a.outLayout());
    }

    /** The value TVM pads max pooling with: the dtype's lowest finite value. */
    static double lowest(DType t) {
        if (t.isFloat()) {
            return t.bits() == 64 ? -Double.MAX_VALUE : t.bits() == 32 || t.code() == DType.Code.BFLOAT ? -Float.MAX_VALUE : -65504.0;
        }
        if (t.code() == DType.Code.UINT || t.isBool()) return 0;
        return -Math.pow(2, t.bits() - 1);
    }
}
