package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.AttrValue;
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
import dev.relayfarm.ops.transform.LayoutTransform;
import java.util.List;

/**
 * Winograd convolution F(m x m, 3 x 3) on channel-blocked tensors (TVM's
 * {@code contrib_conv2d_winograd_weight_transform} / {@code contrib_conv2d_winograd_without_weight_transform},
 * here in the blocked layouts of {@link Conv2DNCHWc}); the matrices are {@link WinogradMatrices}'.
 * <pre>
 * nn.contrib_conv2d_winograd_weight_transform(w, tile_size=m, kernel_layout="OIHW[x]i[y]o")
 *     w: [O/y, I/x, 3, 3, x, y] (or OIHW)  -->  U: [alpha, alpha, O/y, I/x, x, y],  U[., ., o, i] = G w[o, i] G^T
 * nn.contrib_conv2d_winograd_NCHWc(data, U, tile_size=m, padding, channels, data_layout="NCHW[x]c", out_layout="NCHW[y]c")
 *     the stride-1, dilation-1, ungrouped 3x3 convolution of data by the w whose transform U is
 * </pre>
 * The weight transform runs at compile time (fold-constant evaluates its reference kernel, in float64, on the
 * constant weight). The convolution's reference kernel is Winograd's algorithm itself in float64 (input
 * tiles B^T d B, products summed over input channels, A^T M A; output tiles past the edge cropped).
 */
public final class WinogradConv2D {
    public static final String WEIGHT_TRANSFORM = "nn.contrib_conv2d_winograd_weight_transform";
    public static final String NAME = "nn.contrib_conv2d_winograd_NCHWc";
    private static final Layout NCHW = Layout.parse("NCHW");
    private static final Layout OIHW = Layout.parse("OIHW");

    private WinogradConv2D() {}

    public record WeightTransformAttrs(int tileSize, Layout kernelLayout) {}

    public record WinogradAttrs(int tileSize, int[] padding, long channels, Layout dataLayout, Layout outLayout, DType outDtype) {}

    public static OpDef<WeightTransformAttrs> weightTransform() {
        return new OpDef<>(WEIGHT_TRANSFORM, 1, WinogradConv2D::parseWeight, WinogradConv2D::weightRelation, OpPattern.OPAQUE, WinogradConv2D::weightCompute);
    }

    public static OpDef<WinogradAttrs> def() {
        return new OpDef<>(NAME, 2, WinogradConv2D::parse, WinogradConv2D::relation, OpPattern.OUT_ELEMWISE_FUSABLE, WinogradConv2D::compute);
    }

    /** Whether F(m x m, 3 x 3) has matrices here (m = 2 or 4). */
    public static boolean tileSizeSupported(int m) {
        return WinogradMatrices.supports(m);
    }

    private static int tileSize(String op, AttrReader r) {
        int m = r.int32("tile_size", 4);
        if (!WinogradMatrices.supports(m)) throw new RelationException(op + ": tile_size must be 2 or 4, got " + m);
        return m;
    }

    static WeightTransformAttrs parseWeight(Attrs attrs) {
        AttrReader r = new AttrReader(WEIGHT_TRANSFORM, attrs);
        int m = tileSize(WEIGHT_TRANSFORM, r);
        String kl = r.string("kernel_layout", "OIHW");
        r.finish();
        return new WeightTransformAttrs(m, layout(WEIGHT_TRANSFORM, "kernel_layout", kl, "OIHW", "OI"));
    }

    static WinogradAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        int m = tileSize(NAME, r);
        int[] padding = Rel.pad4(NAME, "padding", r.ints("padding", 0, 0));
        long channels = r.integer("channels", -1);
        String dl = r.string("data_layout", "NCHW8c");
        String ol = r.string("out_layout", "");
        DType outDtype = r.dtype("out_dtype", null);
        r.finish();
        Rel.nonNegative(NAME, "padding", padding);
        Layout data = layout(NAME, "data_layout", dl, "NCHW", "C");
        Layout out = ol.isEmpty() ? data : layout(NAME, "out_layout", ol, "NCHW", "C");
        return new WinogradAttrs(m, padding, channels, data, out, outDtype);
    }

    /** A layout with the primal axes of {@code canonical}, splitting only axes in {@code splittable}. */
    private static Layout layout(String op, String key, String text, String canonical, String splittable) {
        Layout l;
        try {
            l = Layout.parse(text);
        } catch (IllegalArgumentException e) {
            throw new RelationException(op + ": " + key + ": " + e.getMessage());
        }
        if (!l.primalSet().equals(Layout.parse(canonical).primalSet())) {
            throw new RelationException(op + ": " + key + " must have the primal axes of " + canonical + ", got \"" + text + "\"");
        }
        for (Layout.Axis a : l.axes()) {
            if (!a.isPrimal() && splittable.indexOf(a.primal()) < 0) throw new RelationException(op + ": " + key + " may only split " + splittable + ", got \"" + text + "\"");
        }
        return l;
    }

    /** The block of {@code primal} in {@code l} (1 when it is not split). */
    private static int block(Layout l, char primal) {
        for (Layout.Axis a : l.axes()) if (!a.isPrimal() && a.primal() == primal) return a.factor();
        return 1;
    }

    private static List<Dim> convert(String op, String what, Layout from, TensorType t, Layout to) {
        if (t.rank() != from.rank()) throw new RelationException(op + ": " + what + " " + Rel.shape(t.shape()) + " must have rank " + from.rank() + " for layout " + from);
        try {
            return Layout.convertShape(from, t.shape(), to);
        } catch (IllegalArgumentException e) {
            throw new RelationException(op + ": " + what + " " + Rel.shape(t.shape()) + ": " + e.getMessage());
        }
    }

    static boolean weightRelation(List<Type> types, int numInputs, WeightTransformAttrs a, TypeReporter reporter) {
        TensorType w = Rel.tensor(WEIGHT_TRANSFORM, "weight", types.get(0));
        if (w == null) return false;
        List<Dim> oihw = convert(WEIGHT_TRANSFORM, "weight", a.kernelLayout(), w, OIHW);
        if (Rel.surelyDiffer(oihw.get(2), Dim.of(3)) || Rel.surelyDiffer(oihw.get(3), Dim.of(3))) {
            throw new RelationException(WEIGHT_TRANSFORM + ": the kernel must be 3x3, got weight " + Rel.shape(w.shape()) + " in " + a.kernelLayout());
        }
        int x = block(a.kernelLayout(), 'I'), y = block(a.kernelLayout(), 'O'), alpha = a.tileSize() + 2;
        Dim o = oihw.get(0) instanceof Dim.Int(long v) ? Dim.of(v / y) : oihw.get(0), i = oihw.get(1) instanceof Dim.Int(long v) ? Dim.of(v / x) : oihw.get(1);
        if (y > 1 && !(oihw.get(0) instanceof Dim.Int) || x > 1 && !(oihw.get(1) instanceof Dim.Int)) return false;
        reporter.assign(types.get(1), new TensorType(List.of(Dim.of(alpha), Dim.of(alpha), o, i, Dim.of(x), Dim.of(y)), w.dtype()));
        return true;
    }

    static List<NDArray> weightCompute(List<NDArray> inputs, WeightTransformAttrs a) {
        NDArray w = transform(inputs.get(0), a.kernelLayout(), OIHW);
        int m = a.tileSize(), alpha = m + 2, o = w.dim(0), in = w.dim(1);
        int x = block(a.kernelLayout(), 'I'), y = block(a.kernelLayout(), 'O');
        double[][] g = WinogradMatrices.g(m);
        NDArray u = NDArray.zeros(w.dtype(), alpha, alpha, o / y, in / x, x, y);
        double[][] gw = new double[alpha][3];
        for (int oc = 0; oc < o; oc++) {
            for (int ic = 0; ic < in; ic++) {
                int base = (oc * in + ic) * 9;
                for (int e = 0; e < alpha; e++) {
                    for (int s = 0; s < 3; s++) {
                        double acc = 0;
                        for (int r = 0; r < 3; r++) acc += g[e][r] * w.getDouble(base + r * 3 + s);
                        gw[e][s] = acc;
                    }
                }
                for (int e = 0; e < alpha; e++) {
                    for (int nu = 0; nu < alpha; nu++) {
                        double acc = 0;
                        for (int s = 0; s < 3; s++) acc += gw[e][s] * g[nu][s];
                        int dst = ((((e * alpha + nu) * (o / y) + oc / y) * (in / x) + ic / x) * x + ic % x) * y + oc % y;
                        u.setDouble(dst, acc);
                    }
                }
            }
        }
        return List.of(u);
    }

    static boolean relation(List<Type> types, int numInputs, WinogradAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(NAME, "data", types.get(0));
        TensorType u = Rel.tensor(NAME, "weight", types.get(1));
        if (data == null || u == null) return false;
        List<Dim> d = convert(NAME, "data", a.dataLayout(), data, NCHW);
        int alpha = a.tileSize() + 2;
        if (u.rank() != 6 || u.shape().stream().anyMatch(x -> !x.isStatic()) || u.shape().get(0).value() != alpha || u.shape().get(1).value() != alpha) {
            throw new RelationException(NAME + ": the transformed weight must be static [" + alpha + ", " + alpha + ", O/oc, I/ic, ic, oc] for tile_size="
                    + a.tileSize() + ", got " + Rel.shape(u.shape()));
        }
        long in = u.shape().get(3).value() * u.shape().get(4).value(), out = u.shape().get(2).value() * u.shape().get(5).value();
        if (Rel.surelyDiffer(d.get(1), Dim.of(in))) {
            throw new RelationException(NAME + ": input channels " + d.get(1) + " (data " + Rel.shape(data.shape()) + ") do not match the transformed weight "
                    + Rel.shape(u.shape()) + " (" + in + ")");
        }
        if (a.channels() >= 0 && a.channels() != out) throw new RelationException(NAME + ": channels=" + a.channels() + " does not match the transformed weight " + Rel.shape(u.shape()));
        Dim oh = Conv2D.outDim(NAME, "height", d.get(2), Dim.of(3), 1, a.padding()[0] + a.padding()[2], 1);
        Dim ow = Conv2D.outDim(NAME, "width", d.get(3), Dim.of(3), 1, a.padding()[1] + a.padding()[3], 1);
        List<Dim> shape;
        try {
            shape = Layout.convertShape(NCHW, List.of(d.get(0), Dim.of(out), oh, ow), a.outLayout());
        } catch (IllegalArgumentException e) {
            throw new RelationException(NAME + ": output: " + e.getMessage());
        }
        reporter.assign(types.get(2), new TensorType(shape, a.outDtype() != null ? a.outDtype() : data.dtype()));
        return true;
    }

    /** Winograd's algorithm in float64 on the unpacked data and weight. */
    static List<NDArray> compute(List<NDArray> inputs, WinogradAttrs a) {
        NDArray x = transform(inputs.get(0), a.dataLayout(), NCHW), u = inputs.get(1);
        int m = a.tileSize(), alpha = m + 2;
        int n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
        int ocChunks = u.dim(2), icChunks = u.dim(3), ib = u.dim(4), ob = u.dim(5), o = ocChunks * ob;
        int pt = a.padding()[0], pl = a.padding()[1];
        int oh = h + pt + a.padding()[2] - 2, ow = w + pl + a.padding()[3] - 2;
        int th = (oh + m - 1) / m, tw = (ow + m - 1) / m;
        double[][] bt = WinogradMatrices.bt(m), at = WinogradMatrices.at(m);
        DType dt = a.outDtype() != null ? a.outDtype() : inputs.get(0).dtype();
        NDArray y = NDArray.zeros(dt, n, o, oh, ow);
        double[][][] v = new double[c][alpha][alpha];
        double[][] d = new double[alpha][alpha], t = new double[alpha][alpha], mm = new double[alpha][alpha], yt = new double[m][alpha];
        for (int b = 0; b < n; b++) {
            for (int ty = 0; ty < th; ty++) {
                for (int tx = 0; tx < tw; tx++) {
                    for (int ch = 0; ch < c; ch++) {
                        for (int i = 0; i < alpha; i++) {
                            for (int j = 0; j < alpha; j++) {
                                int yy = ty * m + i - pt, xx = tx * m + j - pl;
                                d[i][j] = yy >= 0 && yy < h && xx >= 0 && xx < w ? x.getDouble(((b * c + ch) * h + yy) * w + xx) : 0;
                            }
                        }
                        mul(bt, d, t, false);
                        mul(t, bt, v[ch], true);
                    }
                    for (int f = 0; f < o; f++) {
                        for (double[] row : mm) java.util.Arrays.fill(row, 0);
                        for (int ch = 0; ch < c; ch++) {
                            for (int e = 0; e < alpha; e++) {
                                for (int nu = 0; nu < alpha; nu++) {
                                    int ui = ((((e * alpha + nu) * ocChunks + f / ob) * icChunks + ch / ib) * ib + ch % ib) * ob + f % ob;
                                    mm[e][nu] += u.getDouble(ui) * v[ch][e][nu];
                                }
                            }
                        }
                        mul(at, mm, yt, false);
                        for (int i = 0; i < m; i++) {
                            for (int j = 0; j < m; j++) {
                                int yy = ty * m + i, xx = tx * m + j;
                                if (yy >= oh || xx >= ow) continue;
                                double acc = 0;
                                for (int k = 0; k < alpha; k++) acc += yt[i][k] * at[j][k];
                                y.setDouble(((b * o + f) * oh + yy) * ow + xx, acc);
                            }
                        }
                    }
                }
            }
        }
        return List.of(transform(y, NCHW, a.outLayout()));
    }

    /** {@code out = p q} ({@code q} read transposed when {@code transposeQ}: {@code out = p q^T}). */
    private static void mul(double[][] p, double[][] q, double[][] out, boolean transposeQ) {
        int rows = p.length, inner = p[0].length, cols = transposeQ ? q.length : q[0].length;
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                double acc = 0;
                for (int k = 0; k < inner; k++) acc += p[i][k] * (transposeQ ? q[j][k] : q[k][j]);
                out[i][j] = acc;
            }
        }
    }

    private static NDArray transform(NDArray x, Layout from, Layout to) {
        if (from.equals(to)) return x;
        Attrs attrs = Attrs.of("src_layout", AttrValue.of(from.name())).with("dst_layout", AttrValue.of(to.name()));
        return LayoutTransform.DEF.compute(List.of(x), attrs).getFirst();
    }
}
