package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.attrs;
import static dev.relayfarm.ad.Grads.call;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.nn.Conv2DTranspose;
import dev.relayfarm.ops.nn.GlobalPool2D;
import dev.relayfarm.ops.nn.Pool2D;
import java.util.List;

/**
 * Gradients of convolutions and pooling. A convolution's data adjoint is the transposed convolution with the same
 * weight and geometry (and the other way round); its weight adjoint is itself a convolution, of the data by the
 * output adjoint with batch and channels swapped (TVM's trick, {@link #weightGrad}). Pools send their adjoint back
 * through {@code nn.max_pool2d_grad} / {@code nn.avg_pool2d_grad}. Everything is NCHW / OIHW (IOHW for the
 * transposed weight); other layouts are a {@link GradientException} (convert the layout first).
 */
final class ConvPoolGradients {
    private ConvPoolGradients() {}

    static void register(RuleTable.Registrar<OpGradient> r) {
        r.rule("nn.conv2d", ConvPoolGradients::conv2d);
        r.rule("nn.conv2d_transpose", ConvPoolGradients::conv2dTranspose);
        r.rule("nn.max_pool2d", (c, g) -> List.of(poolGrad(c, g, "nn.max_pool2d_grad")));
        r.rule("nn.avg_pool2d", (c, g) -> List.of(poolGrad(c, g, "nn.avg_pool2d_grad")));
        r.rule("nn.global_avg_pool2d", ConvPoolGradients::globalAvgPool);
        r.rule("nn.global_max_pool2d", ConvPoolGradients::globalMaxPool);
    }

    /**
     * y = conv2d(x, w): dx = conv2d_transpose(g, w) with the forward geometry, its output_padding making up the rows
     * and columns a strided window never reached (so dx has x's shape); dw by {@link #weightGrad} of x by g.
     */
    private static List<Expr> conv2d(GradientCall c, Expr g) {
        Conv2D.Conv2DAttrs a = c.parsedAttrs();
        canonical(c, a, "OIHW");
        long[] x = Grads.staticShape(c.argType(0), c.op()), w = Grads.staticShape(c.argType(1), c.op());
        long[] y = Grads.staticShape(c.outTensorType(), c.op());
        int[] outPad = new int[2];
        for (int i = 0; i < 2; i++) {
            long reached = (y[2 + i] - 1) * a.strides()[i] - a.padding()[i] - a.padding()[2 + i] + (long) a.dilation()[i] * (w[2 + i] - 1) + 1;
            outPad[i] = Math.toIntExact(x[2 + i] - reached);
        }
        Expr dx = stridelessDataGrad(g, c.arg(1), a, w);
        if (dx == null) {
            dx = call("nn.conv2d_transpose", attrs("strides", a.strides(), "padding", a.padding(), "dilation", a.dilation(),
                    "groups", a.groups(), "output_padding", outPad), g, c.arg(1));
        }
        Expr dw = weightGrad(c.arg(0), x, g, y, w, a, c.argType(0).dtype());
        return List.of(dx, dw);
    }

    /**
     * With stride 1 and one group the data adjoint is a plain convolution: dx[n, i, h, v] = sum_{o, r, s} g[n, o, h + pt
     * - r * d, v + pl - s * d] w[o, i, r, s], i.e. g padded by d * (k - 1) - pad on each side, convolved (same dilation)
     * with w flipped in both spatial axes and read as [I, O, kh, kw]. It then goes through conv2d's kernel, which -O3
     * lays out and vectorizes, where conv2d_transpose's gather visits every tap of every output with bounds checks (on
     * the LeNet loss it cost more than the whole forward pass). Null when that does not apply (strided, grouped, or a
     * padding above d * (k - 1), which the convolution's padding cannot express): the caller uses conv2d_transpose.
     */
    private static Expr stridelessDataGrad(Expr g, Expr weight, Conv2D.Conv2DAttrs a, long[] w) {
        if (a.strides()[0] != 1 || a.strides()[1] != 1 || a.groups() != 1) return null;
        long[] pad = new long[4];
        for (int i = 0; i < 4; i++) {
            pad[i] = (long) a.dilation()[i % 2] * (w[2 + i % 2] - 1) - a.padding()[i];
            if (pad[i] < 0) return null;
        }
        Expr flipped = call("reverse", attrs("axis", 3L), call("reverse", attrs("axis", 2L), weight));
        Expr io = call("transpose", attrs("axes", new long[] {1, 0, 2, 3}), flipped);
        return call("nn.conv2d", attrs("strides", new long[] {1, 1}, "padding", pad, "dilation", a.dilation()), g, io);
    }

    /**
     * y = conv2d_transpose(x, w) is the adjoint of conv2d(., w) read as OIHW with the same geometry, so
     * dx = conv2d(g, w) (cut to x's size: an output_padding at least the stride adds a row conv2d reaches again);
     * dw[i, o, r, s] = sum x[n, i, h, v] g[n, o', h * stride - pad + r * dilation, ...] is {@link #weightGrad}
     * with the roles of data and adjoint exchanged.
     */
    private static List<Expr> conv2dTranspose(GradientCall c, Expr g) {
        Conv2DTranspose.Conv2DTransposeAttrs at = c.parsedAttrs();
        Conv2D.Conv2DAttrs a = at.conv();
        canonical(c, a, "IOHW");
        long[] x = Grads.staticShape(c.argType(0), c.op()), w = Grads.staticShape(c.argType(1), c.op());
        long[] y = Grads.staticShape(c.outTensorType(), c.op());
        Expr dx = call("nn.conv2d", attrs("strides", a.strides(), "padding", a.padding(), "dilation", a.dilation(), "groups", a.groups()), g, c.arg(1));
        for (int i = 0; i < 2; i++) {
            long got = (y[2 + i] + a.padding()[i] + a.padding()[2 + i] - (long) a.dilation()[i] * (w[2 + i] - 1) - 1) / a.strides()[i] + 1;
            if (got != x[2 + i]) {
                dx = call("strided_slice", attrs("begin", new long[] {0, 0, 0, 0}, "end", x), dx);
                break;
            }
        }
        Expr dw = weightGrad(g, y, c.arg(0), x, w, a, c.argType(0).dtype());
        return List.of(dx, dw);
    }

    /**
     * The weight adjoint of a convolution of {@code data} [N, Cd, Hd, Wd] whose output adjoint is {@code adj}
     * [N, Ca, Ha, Wa]: {@code dw[a, d', r, s] = sum_{n, h, v} adj[n, a, h, v] * data[n, d, h * stride - pad + r * dilation, ...]}
     * with d the d'-th channel of a's group, shape [Ca, Cd / groups, kh, kw]. Swapping batch and channels of both makes
     * that a convolution of data^T [Cd, N, ...] by adj^T [Ca, N, ...] as weight, whose stride is the forward dilation and
     * whose dilation is the forward stride; its result [Cd, Ca, >= kh, >= kw] is cut to the kernel and transposed. With
     * groups it pairs every data channel with every adjoint channel, and a 0/1 mask summed over the data's group axis
     * keeps the pairs of the same group.
     */
    private static Expr weightGrad(Expr data, long[] d, Expr adj, long[] ad, long[] w, Conv2D.Conv2DAttrs a, DType dtype) {
        Attrs swap = attrs("axes", new long[] {1, 0, 2, 3});
        Expr all = call("nn.conv2d", attrs("strides", a.dilation(), "padding", a.padding(), "dilation", a.strides()),
                call("transpose", swap, data), call("transpose", swap, adj));
        long kh = w[2], kw = w[3];
        all = call("strided_slice", attrs("begin", new long[] {0, 0, 0, 0}, "end", new long[] {d[1], ad[1], kh, kw}), all);
        int groups = a.groups();
        if (groups == 1) return call("transpose", swap, all);
        long dg = d[1] / groups, ag = ad[1] / groups;
        Expr split = call("reshape", attrs("newshape", new long[] {groups, dg, groups, ag, kh, kw}), all);
        double[] eye = new double[groups * groups];
        for (int i = 0; i < groups; i++) eye[i * groups + i] = 1;
        Constant mask = new Constant(NDArray.fromDoubles(dtype, new int[] {groups, 1, groups, 1, 1, 1}, eye));
        Expr same = call("sum", attrs("axis", new long[] {0}), call("multiply", split, mask));
        return call("transpose", swap, call("reshape", attrs("newshape", new long[] {dg, ad[1], kh, kw}), same));
    }

    /** NCHW data and output, the canonical kernel layout, no dtype change: what the rules above assume. */
    private static void canonical(GradientCall c, Conv2D.Conv2DAttrs a, String kernel) {
        if (!a.dataLayout().name().equals("NCHW") || !a.outLayout().name().equals("NCHW") || !a.kernelLayout().name().equals(kernel)) {
            throw new GradientException(c.op() + ": the gradient needs data_layout NCHW and kernel_layout " + kernel + ", got "
                    + a.dataLayout().name() + " / " + a.kernelLayout().name() + " -> " + a.outLayout().name());
        }
        if (a.outDtype() != null && !a.outDtype().equals(c.argType(0).dtype())) {
            throw new GradientException(c.op() + ": the gradient needs out_dtype equal to the input's, got " + a.outDtype());
        }
    }

    /** The pool's adjoint through its _grad operator, which takes the pool's attributes unchanged. */
    private static Expr poolGrad(GradientCall c, Expr g, String gradOp) {
        Pool2D.Pool2DAttrs a = c.parsedAttrs();
        if (!a.layout().name().equals("NCHW") || !a.outLayout().name().equals("NCHW")) {
            throw new GradientException(c.op() + ": the gradient needs layout NCHW, got " + a.layout().name() + " -> " + a.outLayout().name());
        }
        return call(gradOp, c.attrs(), g, c.arg(0));
    }

    /** Every element of a plane gets the plane's adjoint over H * W (the result keeps H and W as 1, so it broadcasts). */
    private static List<Expr> globalAvgPool(GradientCall c, Expr g) {
        globalLayout(c);
        TensorType x = c.argType(0);
        long hw = Grads.staticShapeProduct(x, c.op()) / Grads.staticShapeProduct(c.outTensorType(), c.op());
        return List.of(Grads.broadcastTo(call("divide", g, Grads.scalar(hw, x.dtype())), x, c.op()));
    }

    /**
     * NCHW: max_pool2d_grad with one window over the plane, so the adjoint goes to the first maximum as the pools'
     * does. Other layouts compare each element with the plane's maximum: every element equal to it gets the whole
     * adjoint (a tie, measure zero for real data, counts more than once).
     */
    private static List<Expr> globalMaxPool(GradientCall c, Expr g) {
        GlobalPool2D.GlobalPool2DAttrs a = globalLayout(c);
        TensorType x = c.argType(0);
        long[] shape = Grads.staticShape(x, c.op());
        if (a.layout().name().equals("NCHW")) {
            return List.of(call("nn.max_pool2d_grad", attrs("pool_size", new long[] {shape[2], shape[3]}), g, c.arg(0)));
        }
        Expr hit = call("equal", c.arg(0), c.out());
        return List.of(call("where", hit, Grads.broadcastTo(g, x, c.op()), call("zeros_like", c.arg(0))));
    }

    private static GlobalPool2D.GlobalPool2DAttrs globalLayout(GradientCall c) {
        GlobalPool2D.GlobalPool2DAttrs a = c.parsedAttrs();
        if (!a.layout().equals(a.outLayout())) {
            throw new GradientException(c.op() + ": the gradient needs out_layout equal to layout, got " + a.layout().name() + " -> " + a.outLayout().name());
        }
        return a;
    }
}
