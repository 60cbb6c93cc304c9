package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.attrs;
import static dev.relayfarm.ad.Grads.call;
import static dev.relayfarm.ad.Grads.scalar;
import static dev.relayfarm.ad.Grads.staticShape;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ops.nn.Activations.LeakyReluAttrs;
import dev.relayfarm.ops.nn.Activations.PReluAttrs;
import dev.relayfarm.ops.nn.BatchMatmul.BatchMatmulAttrs;
import dev.relayfarm.ops.nn.BiasAdd;
import dev.relayfarm.ops.nn.Lrn.LrnAttrs;
import dev.relayfarm.ops.nn.Matmul.MatmulAttrs;
import dev.relayfarm.ops.nn.Normalization.NormAttrs;
import dev.relayfarm.ops.nn.Rel;
import dev.relayfarm.ops.nn.Softmax.SoftmaxAttrs;
import java.util.Arrays;
import java.util.List;

/** Gradients of the neural-network operators. */
final class NnGradients {
    private NnGradients() {}

    static void register(RuleTable.Registrar<OpGradient> r) {
        r.rule("nn.dense", NnGradients::dense);
        r.rule("nn.matmul", NnGradients::matmul);
        r.rule("nn.batch_matmul", NnGradients::batchMatmul);
        r.rule("nn.bias_add", (c, g) -> {
            int rank = c.outTensorType().rank();
            int axis = c.<BiasAdd.BiasAddAttrs>parsedAttrs().axis();
            return List.<Expr>of(g, sumExcept(g, Rel.axis(c.op(), axis, rank)));
        });
        // The mask reads relu's output (positive exactly where the input is), so the input need not be kept: a
        // convolution's bias_add and relu then fuse as in the forward pass. A scalar zero that where broadcasts:
        // zeros_like would fold into a constant of g's size, loaded on every step.
        r.rule("nn.relu", (c, g) -> List.<Expr>of(call("where", call("greater", c.out(), scalar(0, c.argType(0).dtype())), g,
                scalar(0, c.argType(0).dtype()))));
        r.rule("nn.leaky_relu", (c, g) -> {
            LeakyReluAttrs a = c.parsedAttrs();
            DType t = c.argType(0).dtype();
            return List.<Expr>of(call("where", call("greater", c.arg(0), scalar(0, t)), g, call("multiply", g, scalar(a.alpha(), t))));
        });
        r.rule("nn.prelu", NnGradients::prelu);
        r.rule("nn.softmax", (c, g) -> {
            int axis = softmaxAxis(c);
            // dx = y * (g - sum(g * y)) along the axis.
            Expr dot = call("sum", attrs("axis", new long[] {axis}, "keepdims", true), call("multiply", g, c.out()));
            return List.<Expr>of(call("multiply", c.out(), call("subtract", g, dot)));
        });
        r.rule("nn.log_softmax", (c, g) -> {
            int axis = softmaxAxis(c);
            // y = x - logsumexp(x): dx = g - softmax(x) * sum(g), with softmax(x) = exp(y).
            Expr total = call("sum", attrs("axis", new long[] {axis}, "keepdims", true), g);
            return List.<Expr>of(call("subtract", g, call("multiply", call("exp", c.out()), total)));
        });
        r.rule("nn.dropout", (c, g) -> {
            // The kernel has inference semantics: the data passes through unchanged and the mask is constant.
            return List.<Expr>of(new TupleGetItem(g, 0));
        });
        r.rule("nn.batch_norm", NnGradients::batchNorm);
        r.rule("nn.layer_norm", NnGradients::layerNorm);
        r.rule("nn.lrn", NnGradients::lrn);
    }

    /** {@code g} cast to the inputs' dtype when the operator accumulated into another ({@code out_dtype}). */
    private static Expr inDtype(GradientCall c, Expr g) {
        DType in = c.argType(0).dtype();
        return c.outTensorType().dtype().equals(in) ? g : call("cast", attrs("dtype", in.toString()), g);
    }

    /** y = x W^T over x's last dim: dx = g W; dW = g2^T x2 with the leading dims of g and x flattened into one. */
    private static List<Expr> dense(GradientCall c, Expr g) {
        long[] xs = staticShape(c.argType(0), c.op());
        long[] ws = staticShape(c.argType(1), c.op());
        Expr gi = inDtype(c, g);
        Expr g2 = call("reshape", attrs("newshape", new long[] {-1, ws[0]}), gi);
        Expr x2 = call("reshape", attrs("newshape", new long[] {-1, xs[xs.length - 1]}), c.arg(0));
        return Arrays.asList(call("nn.matmul", gi, c.arg(1)), call("nn.matmul", attrs("transpose_a", true), g2, x2));
    }

    /**
     * a [.., M, K] (or [K, M] with transpose_a) times b [K, N] (or [N, K] with transpose_b). Writing A, B for the
     * untransposed forms, dA = g B^T and dB = A^T g; each is one matmul whose transpose flags absorb the stored
     * orientation of a and b.
     */
    private static List<Expr> matmul(GradientCall c, Expr g) {
        MatmulAttrs a = c.parsedAttrs();
        long[] as = staticShape(c.argType(0), c.op());
        staticShape(c.argType(1), c.op());
        Expr gi = inDtype(c, g);
        Expr x = c.arg(0), w = c.arg(1);
        boolean ta = a.transposeA(), tb = a.transposeB();
        Expr da, db;
        if (!ta) {
            da = call("nn.matmul", attrs("transpose_b", !tb), gi, w);
            // Leading dims of a (and of g) flattened into the M rows.
            long n = staticShape(c.outTensorType(), c.op())[c.outTensorType().rank() - 1];
            Expr a2 = call("reshape", attrs("newshape", new long[] {-1, as[as.length - 1]}), x);
            Expr g2 = call("reshape", attrs("newshape", new long[] {-1, n}), gi);
            db = tb ? call("nn.matmul", attrs("transpose_a", true), g2, a2) : call("nn.matmul", attrs("transpose_a", true), a2, g2);
        } else {
            // a is [K, M], g is [M, N].
            da = tb ? call("nn.matmul", attrs("transpose_a", true, "transpose_b", true), w, gi) : call("nn.matmul", attrs("transpose_b", true), w, gi);
            db = tb ? call("nn.matmul", attrs("transpose_a", true, "transpose_b", true), gi, x) : call("nn.matmul", x, gi);
        }
        return Arrays.asList(da, db);
    }

    /** As {@link #matmul} per batch; an operand broadcast over the batch (batch dim 1) gets its adjoint summed over it. */
    private static List<Expr> batchMatmul(GradientCall c, Expr g) {
        BatchMatmulAttrs a = c.parsedAttrs();
        TensorType xt = c.argType(0), yt = c.argType(1);
        long[] out = staticShape(c.outTensorType(), c.op());
        staticShape(xt, c.op());
        staticShape(yt, c.op());
        Expr gi = inDtype(c, g);
        Expr x = c.arg(0), y = c.arg(1);
        boolean ta = a.transposeA(), tb = a.transposeB();
        Expr dx = ta ? bmm(y, gi, tb, true) : bmm(gi, y, false, !tb);
        Expr dy = tb ? bmm(gi, x, true, ta) : bmm(x, gi, !ta, false);
        TensorType full = new TensorType(List.of(Dim.of(out[0]), xt.shape().get(1), xt.shape().get(2)), xt.dtype());
        TensorType fullY = new TensorType(List.of(Dim.of(out[0]), yt.shape().get(1), yt.shape().get(2)), yt.dtype());
        return Arrays.asList(Grads.collapseTo(dx, full, xt, c.op()), Grads.collapseTo(dy, fullY, yt, c.op()));
    }

    private static Expr bmm(Expr x, Expr y, boolean ta, boolean tb) {
        return call("nn.batch_matmul", attrs("transpose_a", ta, "transpose_b", tb), x, y);
    }

    private static int softmaxAxis(GradientCall c) {
        SoftmaxAttrs a = c.parsedAttrs();
        int rank = c.argType(0).rank();
        return Rel.axis(c.op(), a.axis(), rank);
    }

    /** Sums over every axis but {@code axis}: a per-channel vector. */
    private static Expr sumExcept(Expr e, int axis) {
        return call("sum", attrs("axis", new long[] {axis}, "exclude", true), e);
    }

    /** A per-channel vector reshaped to broadcast along {@code axis} of a rank-{@code rank} tensor. */
    private static Expr channel(Expr v, int rank, int axis, long n) {
        long[] shape = new long[rank];
        Arrays.fill(shape, 1);
        shape[axis] = n;
        return call("reshape", attrs("newshape", shape), v);
    }

    /** y = x where x >= 0, alpha[c] x where x < 0 (as the kernel tests it). */
    private static List<Expr> prelu(GradientCall c, Expr g) {
        PReluAttrs a = c.parsedAttrs();
        long[] xs = staticShape(c.argType(0), c.op());
        int rank = xs.length;
        int axis = Rel.axis(c.op(), a.axis(), rank);
        DType t = c.argType(0).dtype();
        Expr negative = call("less", c.arg(0), scalar(0, t));
        Expr alpha = channel(c.arg(1), rank, axis, xs[axis]);
        Expr dx = call("where", negative, call("multiply", g, alpha), g);
        Expr dalpha = sumExcept(call("where", negative, call("multiply", g, c.arg(0)), call("zeros_like", g)), axis);
        return List.of(dx, dalpha);
    }

    /**
     * Inference batch norm, as the kernel computes it from the given moving statistics:
     * {@code y = (x - mean) * gamma * r + beta} with {@code r = 1 / sqrt(var + eps)}; the statistics are also
     * returned as the second and third results, whose adjoints pass straight back to them.
     */
    private static List<Expr> batchNorm(GradientCall c, Expr g) {
        NormAttrs a = c.parsedAttrs();
        long[] xs = staticShape(c.argType(0), c.op());
        int rank = xs.length;
        int axis = Rel.axis(c.op(), a.axis(), rank);
        long n = xs[axis];
        DType t = c.argType(0).dtype();
        Expr gy = new TupleGetItem(g, 0);
        Expr r = call("rsqrt", call("add", c.arg(4), scalar(a.epsilon(), t)));
        Expr scale = a.scale() ? call("multiply", c.arg(1), r) : r;
        Expr centred = call("subtract", c.arg(0), channel(c.arg(3), rank, axis, n));
        Expr dx = call("multiply", gy, channel(scale, rank, axis, n));
        Expr dgamma = a.scale() ? call("multiply", sumExcept(call("multiply", gy, centred), axis), r) : null;
        Expr dbeta = a.center() ? sumExcept(gy, axis) : null;
        Expr dmean = call("subtract", new TupleGetItem(g, 1), call("multiply", sumExcept(gy, axis), scale));
        // d r / d var = -r^3 / 2.
        Expr dr = call("multiply", sumExcept(call("multiply", gy, centred), axis), a.scale() ? c.arg(1) : scalar(1, t));
        Expr dvar = call("add", new TupleGetItem(g, 2),
                call("multiply", dr, call("multiply", scalar(-0.5, t), call("multiply", r, call("multiply", r, r)))));
        return Arrays.asList(dx, dgamma, dbeta, dmean, dvar);
    }

    /**
     * Layer norm over one axis: {@code xhat = (x - mean) r}, {@code r = 1 / sqrt(var + eps)} (biased variance),
     * {@code y = xhat gamma + beta}. With {@code d = dy/dxhat}, the full gradient through mean and variance is
     * {@code dx = r (d - mean(d) - xhat mean(d xhat))}.
     */
    private static List<Expr> layerNorm(GradientCall c, Expr g) {
        NormAttrs a = c.parsedAttrs();
        long[] xs = staticShape(c.argType(0), c.op());
        int rank = xs.length;
        int axis = Rel.axis(c.op(), a.axis(), rank);
        long n = xs[axis];
        DType t = c.argType(0).dtype();
        Expr x = c.arg(0);
        Expr centred = call("subtract", x, mean(x, axis));
        Expr r = call("rsqrt", call("add", mean(call("multiply", centred, centred), axis), scalar(a.epsilon(), t)));
        Expr xhat = call("multiply", centred, r);
        Expr d = a.scale() ? call("multiply", g, channel(c.arg(1), rank, axis, n)) : g;
        Expr dx = call("multiply", r, call("subtract", call("subtract", d, mean(d, axis)), call("multiply", xhat, mean(call("multiply", d, xhat), axis))));
        Expr dgamma = a.scale() ? sumExcept(call("multiply", g, xhat), axis) : null;
        Expr dbeta = a.center() ? sumExcept(g, axis) : null;
        return Arrays.asList(dx, dgamma, dbeta);
    }

    private static Expr mean(Expr e, int axis) {
        return call("mean", attrs("axis", new long[] {axis}, "keepdims", true), e);
    }

    /**
     * {@code y[c] = x[c] D[c]^-beta}, {@code D[c] = bias + alpha/size * sum(x[j]^2, j in [c - size/2, c - size/2 + size))}.
     * {@code dx[j] = g[j] D[j]^-beta - 2 beta alpha/size x[j] sum(g[c] x[c] D[c]^(-beta-1), c with j in c's window)}; the
     * c whose window holds j are {@code [j + size/2 - size + 1, j + size/2]}, the window mirrored.
     */
    private static List<Expr> lrn(GradientCall c, Expr g) {
        LrnAttrs a = c.parsedAttrs();
        long[] xs = staticShape(c.argType(0), c.op());
        int rank = xs.length;
        int axis = Rel.axis(c.op(), a.axis(), rank);
        DType t = c.argType(0).dtype();
        int size = a.size(), half = size / 2;
        Expr x = c.arg(0);
        Expr sq = call("multiply", x, x);
        Expr dsum = call("add", scalar(a.bias(), t), call("multiply", scalar(a.alpha() / size, t), windowSum(sq, xs, axis, half, size - 1 - half, size, t)));
        Expr dPow = call("power", dsum, scalar(-a.beta(), t));
        Expr u = call("multiply", call("multiply", g, x), call("divide", dPow, dsum));
        Expr back = windowSum(u, xs, axis, size - 1 - half, half, size, t);
        Expr dx = call("subtract", call("multiply", g, dPow),
                call("multiply", scalar(2 * a.beta() * a.alpha() / size, t), call("multiply", x, back)));
        return List.of(dx);
    }

    /**
     * {@code out[c] = sum(e[c - before + k], k in [0, size))} along {@code axis}, zero outside: e padded by
     * {@code before}/{@code after} zeros, then {@code size} shifted slices added.
     */
    private static Expr windowSum(Expr e, long[] shape, int axis, int before, int after, int size, DType t) {
        long[][] width = new long[shape.length][2];
        width[axis][0] = before;
        width[axis][1] = after;
        Expr padded = TransformGradients.padZeros(e, width, t);
        Expr total = null;
        for (int k = 0; k < size; k++) {
            Expr slice = call("strided_slice", attrs("begin", new long[] {k}, "end", new long[] {k + shape[axis]}, "axes", new long[] {axis}), padded);
            total = total == null ? slice : call("add", total, slice);
        }
        return total;
    }
}
