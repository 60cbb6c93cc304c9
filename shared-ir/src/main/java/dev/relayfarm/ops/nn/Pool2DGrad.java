package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * {@code nn.max_pool2d_grad(out_grad, data, <nn.max_pool2d's attributes>)} and
 * {@code nn.avg_pool2d_grad(out_grad, data, <nn.avg_pool2d's attributes>)}, TVM's names: the adjoint of
 * {@code data} given the adjoint {@code out_grad} of the pooled result, of {@code data}'s type. Max sends each
 * window's adjoint to the window's first maximum in row-major window order (the element the forward pool
 * returns, padding never chosen; a window with no input element sends nothing); avg spreads it evenly over the
 * window's input elements, divided by the forward pool's divisor (count_include_pad and ceil_mode as
 * {@link Pool2D}). NCHW only, which is what the gradient rules emit.
 * <pre>
 * nn.max_pool2d_grad(%g: Tensor[(1, 1, 2, 2)], %x: Tensor[(1, 1, 4, 4)], pool_size=[2, 2], strides=[2, 2])
 *   : Tensor[(1, 1, 4, 4)]
 * </pre>
 * The TE computes are PoolComputes.maxPoolGrad / avgPoolGrad.
 */
public final class Pool2DGrad {
    public static final String MAX = "nn.max_pool2d_grad";
    public static final String AVG = "nn.avg_pool2d_grad";

    private Pool2DGrad() {}

    public static OpDef<Pool2D.Pool2DAttrs> maxPoolGrad() {
        return def(MAX, true);
    }

    public static OpDef<Pool2D.Pool2DAttrs> avgPoolGrad() {
        return def(AVG, false);
    }

    private static OpDef<Pool2D.Pool2DAttrs> def(String name, boolean max) {
        // OPAQUE: the result is a scatter over windows, not a function of one output element fusion could inline
        return new OpDef<>(name, 2, attrs -> parse(name, attrs, max), (types, n, a, rep) -> relation(name, types, a, rep),
                OpPattern.OPAQUE, (in, a) -> List.of(compute(in.get(0), in.get(1), a, max)));
    }

    static Pool2D.Pool2DAttrs parse(String op, Attrs attrs, boolean max) {
        Pool2D.Pool2DAttrs a = Pool2D.parse(op, attrs, max);
        if (!a.layout().equals(PoolLayouts.NCHW) || !a.outLayout().equals(PoolLayouts.NCHW)) {
            throw new RelationException(op + ": only layout NCHW is supported, got " + a.layout() + " -> " + a.outLayout());
        }
        return a;
    }

    static boolean relation(String op, List<Type> types, Pool2D.Pool2DAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensorOfRank(op, "data", types.get(1), 4);
        if (data == null) return false;
        List<Dim> d = data.shape();
        Dim oh = PoolWindows.outDim(op, "height", d.get(2), a.poolSize()[0], a.strides()[0], a.padding()[0], a.padding()[2], a.dilation()[0], a.ceilMode());
        Dim ow = PoolWindows.outDim(op, "width", d.get(3), a.poolSize()[1], a.strides()[1], a.padding()[1], a.padding()[3], a.dilation()[1], a.ceilMode());
        TensorType pooled = new TensorType(List.of(d.get(0), d.get(1), oh, ow), data.dtype());
        TensorType grad = Rel.tensor(op, "out_grad", types.get(0));
        if (grad == null) {
            reporter.assign(types.get(0), pooled);
        } else {
            if (grad.rank() != 4 || !grad.dtype().equals(data.dtype())) {
                throw new RelationException(op + ": out_grad " + grad + " must be the pooled type " + pooled);
            }
            for (int i = 0; i < 4; i++) {
                if (Rel.surelyDiffer(grad.shape().get(i), pooled.shape().get(i))) {
                    throw new RelationException(op + ": out_grad " + Rel.shape(grad.shape()) + " is not the pooled shape " + Rel.shape(pooled.shape()));
                }
            }
        }
        reporter.assign(types.get(2), data);
        return true;
    }

    static NDArray compute(NDArray outGrad, NDArray x, Pool2D.Pool2DAttrs a, boolean max) {
        int n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
        int kh = a.poolSize()[0], kw = a.poolSize()[1], sh = a.strides()[0], sw = a.strides()[1];
        int dh = a.dilation()[0], dw = a.dilation()[1];
        int pt = a.padding()[0], pl = a.padding()[1], pb = a.padding()[2], pr = a.padding()[3];
        int oh = (int) PoolWindows.outLength(h, kh, sh, pt, pb, dh, a.ceilMode()), ow = (int) PoolWindows.outLength(w, kw, sw, pl, pr, dw, a.ceilMode());
        if (outGrad.dim(0) != n || outGrad.dim(1) != c || outGrad.dim(2) != oh || outGrad.dim(3) != ow) {
            throw new IllegalArgumentException((max ? MAX : AVG) + ": out_grad " + Arrays2.show(outGrad.shape()) + " is not the pooled shape of "
                    + Arrays2.show(x.shape()));
        }
        double[] v = Arrays2.doubles(x), g = Arrays2.doubles(outGrad);
        double[] res = new double[v.length];
        // one plane per task: windows of different planes never touch the same input element
        Parallel.forEach(n * c, (long) g.length * kh * kw, p -> {
            int xb = p * h * w, ob = p * oh * ow;
            for (int y = 0; y < oh; y++) {
                int y0 = y * sh - pt;
                for (int xx = 0; xx < ow; xx++) {
                    int x0 = xx * sw - pl;
                    double gv = g[ob + y * ow + xx];
                    if (max) {
                        int at = -1;
                        double best = 0;
                        for (int r = 0; r < kh; r++) {
                            int ih = y0 + r * dh;
                            if (ih < 0 || ih >= h) continue;
                            for (int s = 0; s < kw; s++) {
                                int iw = x0 + s * dw;
                                if (iw < 0 || iw >= w) continue;
                                double e = v[xb + ih * w + iw];
                                if (at < 0 || e > best) {
                                    best = e;
                                    at = ih * w + iw;
                                }
                            }
                        }
                        if (at >= 0) res[xb + at] += gv;
                        continue;
                    }
                    double share = gv / PoolWindows.avgDivisor(y0, x0, kh, kw, dh, dw, h, w, pb, pr, a.countIncludePad());
                    for (int r = 0; r < kh; r++) {
                        int ih = y0 + r * dh;
                        if (ih < 0 || ih >= h) continue;
                        for (int s = 0; s < kw; s++) {
                            int iw = x0 + s * dw;
                            if (iw >= 0 && iw < w) res[xb + ih * w + iw] += share;
                        }
                    }
                }
            }
        });
        return Arrays2.fromDoubles(x.dtype(), x.shape(), res);
    }
}
