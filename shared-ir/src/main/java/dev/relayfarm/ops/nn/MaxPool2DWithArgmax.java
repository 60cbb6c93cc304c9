package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * {@code nn.max_pool2d_with_argmax(data, <nn.max_pool2d's attributes>, storage_order=0)}: ONNX MaxPool
 * with its Indices output, as a tuple of the pooled values and, per output, the int64 flat index of the
 * window's maximum in the whole input (batch and channel included; padding is never chosen). Ties keep
 * the first maximum in row-major window order, as ONNX's reference. storage_order 0 numbers the spatial
 * positions row-major ({@code h * W + w}), 1 column-major ({@code h + w * H}). NCHW only.
 * {@code max_pool2d_with_argmax(Tensor[(1, 3, 5, 5)], pool_size=[2, 2], strides=[2, 2])
 * : (Tensor[(1, 3, 2, 2)], Tensor[(1, 3, 2, 2), int64])}. A window with no input element gives the
 * lowest value and index -1. The TE compute is PoolComputes.maxPoolWithArgmax.
 */
public final class MaxPool2DWithArgmax {
    private MaxPool2DWithArgmax() {}

    public static final String NAME = "nn.max_pool2d_with_argmax";

    public record MaxPoolArgmaxAttrs(Pool2D.Pool2DAttrs pool, boolean columnMajor) {}

    public static OpDef<MaxPoolArgmaxAttrs> def() {
        return new OpDef<>(NAME, 1, MaxPool2DWithArgmax::parse, (types, n, a, rep) -> relation(types, a, rep),
                OpPattern.OPAQUE, (in, a) -> compute(in.get(0), a));
    }

    static MaxPoolArgmaxAttrs parse(Attrs attrs) {
        // Pool2D.parse checks the other attributes and rejects unknown ones
        long order = new AttrReader(NAME, attrs).integer("storage_order", 0);
        if (order != 0 && order != 1) throw new RelationException(NAME + ": storage_order must be 0 or 1, got " + order);
        Pool2D.Pool2DAttrs pool = Pool2D.parse(NAME, attrs.without("storage_order"), true);
        if (!pool.layout().equals(PoolLayouts.NCHW) || !pool.outLayout().equals(PoolLayouts.NCHW)) {
            throw new RelationException(NAME + ": only layout NCHW is supported, got " + pool.layout() + " -> " + pool.outLayout());
        }
        return new MaxPoolArgmaxAttrs(pool, order == 1);
    }

    static boolean relation(List<Type> types, MaxPoolArgmaxAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensorOfRank(NAME, "data", types.get(0), 4);
        if (data == null) return false;
        Pool2D.Pool2DAttrs p = a.pool();
        List<Dim> d = data.shape();
        Dim oh = PoolWindows.outDim(NAME, "height", d.get(2), p.poolSize()[0], p.strides()[0], p.padding()[0], p.padding()[2], p.dilation()[0], p.ceilMode());
        Dim ow = PoolWindows.outDim(NAME, "width", d.get(3), p.poolSize()[1], p.strides()[1], p.padding()[1], p.padding()[3], p.dilation()[1], p.ceilMode());
        List<Dim> out = List.of(d.get(0), d.get(1), oh, ow);
        reporter.assign(types.get(1), new TupleType(List.of(new TensorType(out, data.dtype()), new TensorType(out, DType.INT64))));
        return true;
    }

    static List<NDArray> compute(NDArray x, MaxPoolArgmaxAttrs a) {
        Pool2D.Pool2DAttrs p = a.pool();
        int n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
        int kh = p.poolSize()[0], kw = p.poolSize()[1], sh = p.strides()[0], sw = p.strides()[1];
        int dh = p.dilation()[0], dw = p.dilation()[1], pt = p.padding()[0], pl = p.padding()[1];
        int oh = (int) PoolWindows.outLength(h, kh, sh, pt, p.padding()[2], dh, p.ceilMode());
        int ow = (int) PoolWindows.outLength(w, kw, sw, pl, p.padding()[3], dw, p.ceilMode());
        double[] v = Arrays2.doubles(x);
        double[] out = new double[n * c * oh * ow];
        double[] idx = new double[out.length];
        double lowest = Pool2D.lowest(x.dtype());
        Parallel.forEach(n * c, (long) out.length * kh * kw, plane -> {
            int xb = plane * h * w, ob = plane * oh * ow;
            for (int y = 0; y < oh; y++) {
                for (int xx = 0; xx < ow; xx++) {
                    double best = lowest;
                    long at = -1;
                    for (int r = 0; r < kh; r++) {
                        int ih = y * sh - pt + r * dh;
                        if (ih < 0 || ih >= h) continue;
                        for (int s = 0; s < kw; s++) {
                            int iw = xx * sw - pl + s * dw;
                            if (iw < 0 || iw >= w) continue;
                            double e = v[xb + ih * w + iw];
                            if (at < 0 || e > best) {
                                best = e;
                                at = (long) xb + (a.columnMajor() ? ih + (long) iw * h : (long) ih * w + iw);
                            }
                        }
                    }
                    out[ob + y * ow + xx] = best;
                    idx[ob + y * ow + xx] = at;
                }
            }
        });
        int[] shape = {n, c, oh, ow};
        return List.of(Arrays2.fromDoubles(x.dtype(), shape, out), Arrays2.fromDoubles(DType.INT64, shape, idx));
    }
}
