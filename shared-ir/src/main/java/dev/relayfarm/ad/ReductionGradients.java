package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.call;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.ReductionAxes;
import dev.relayfarm.ops.VarianceAttrs;
import dev.relayfarm.ops.algorithm.Scan;
import java.util.Arrays;
import java.util.List;

/** Gradients of the reductions and scans: the adjoint is broadcast back over the reduced axes. */
final class ReductionGradients {
    private ReductionGradients() {}

    static void register(RuleTable.Registrar<OpGradient> r) {
        r.rule("sum", (c, g) -> List.of(unreduce(c, g)));
        r.rule("mean", (c, g) -> {
            TensorType in = c.argType(0);
            return List.<Expr>of(call("divide", unreduce(c, g), Grads.scalar(reducedCount(c), in.dtype())));
        });
        r.rule("max", ReductionGradients::extremum);
        r.rule("min", ReductionGradients::extremum);
        // d/dx_i prod(x) = prod(x) / x_i: exact for nonzero inputs (a zero factor would need the product of the others).
        r.rule("prod", (c, g) -> List.<Expr>of(call("divide", unreduce(c, call("multiply", g, c.out())), c.arg(0))));
        r.rule("variance", (c, g) -> variance(c, g));
        // std = sqrt(variance): the variance's adjoint is g / (2 std).
        r.rule("std", (c, g) -> variance(c, call("divide", g, call("multiply", Grads.scalar(2, c.outTensorType().dtype()), c.out()))));
        r.rule("cumsum", (c, g) -> scan(c, g, false));
        r.rule("cumprod", (c, g) -> scan(c, g, true));
        r.constant("argmax", "argmin", "all", "any");
    }

    /** {@code g} (the reduction's adjoint) reshaped to keep the reduced axes as 1, then broadcast to the input. */
    static Expr unreduce(GradientCall c, Expr g) {
        TensorType in = c.argType(0);
        long[] keep = Grads.staticShape(in, c.op()).clone();
        for (int axis : reducedAxes(c)) keep[axis] = 1;
        return Grads.broadcastTo(call("reshape", Grads.attrs("newshape", keep), g), in, c.op());
    }

    /** The axes a ReduceAttrs-style operator reduces, normalized to the input's rank. */
    static int[] reducedAxes(GradientCall c) {
        return axes(c).reducedAxes(c.op(), c.argType(0).rank());
    }

    private static ReductionAxes axes(GradientCall c) {
        return c.parsedAttrs();
    }

    /** How many input elements fold into each result element. */
    private static long reducedCount(GradientCall c) {
        long[] shape = Grads.staticShape(c.argType(0), c.op());
        long n = 1;
        for (int axis : reducedAxes(c)) n *= shape[axis];
        return n;
    }

    /**
     * max/min: the adjoint goes to the positions holding the extremum (the input equal to the broadcast result).
     * Ties have measure zero, but where they do occur (a max over relu outputs) the adjoint is split evenly between
     * them, as TVM does, so the adjoints of one group still sum to g.
     */
    private static List<Expr> extremum(GradientCall c, Expr g) {
        TensorType in = c.argType(0);
        Expr hit = call("cast", Grads.attrs("dtype", in.dtype().toString()), call("equal", c.arg(0), unreduce(c, c.out())));
        long[] axes = Arrays.stream(reducedAxes(c)).asLongStream().toArray();
        Expr ties = Grads.broadcastTo(call("sum", Grads.attrs("axis", axes, "keepdims", true), hit), in, c.op());
        return List.of(call("multiply", unreduce(c, g), call("divide", hit, ties)));
    }

    /**
     * variance(x, m) = sum((x - m)^2) / d over the reduced axes, d being N or N - 1 (unbiased): dx = 2 (x - m) / d * g and
     * dm = -dx summed back to m's shape. The mean is an argument in its own right, so a program passing
     * {@code mean(x)} gets the chain through it from the mean's own rule.
     */
    private static List<Expr> variance(GradientCall c, Expr g) {
        TensorType in = c.argType(0);
        // The scale 2 / d would truncate to 0 in an integer dtype; integer inputs carry no meaningful adjoint anyway.
        if (!in.dtype().isFloat()) return Arrays.asList(null, null);
        boolean unbiased = ((VarianceAttrs) axes(c)).unbiased();
        long n = reducedCount(c);
        Expr centered = call("subtract", c.arg(0), c.arg(1));
        Expr scale = Grads.scalar(2.0 / (unbiased ? n - 1 : n), in.dtype());
        Expr dx = call("multiply", unreduce(c, g), call("multiply", centered, scale));
        return List.of(dx, Grads.collapseTo(call("negative", dx), in, c.argType(1), c.op()));
    }

    /**
     * cumsum's adjoint is the cumulative sum of g taken from the end (reverse, cumsum, reverse), with the same
     * {@code exclusive}: y_i sums x_j over j <= i (j < i), so x_j's adjoint sums g_i over i >= j (i > j). cumprod's
     * y_i = prod x_j gives x_j the same reverse sum of g_i y_i, divided by x_j (nonzero inputs).
     * Without an axis the scan ran over the flattened input, so the adjoint is reshaped back.
     */
    private static List<Expr> scan(GradientCall c, Expr g, boolean product) {
        Scan.ScanAttrs a = c.<Scan.ScanAttrs>parsedAttrs();
        TensorType in = c.argType(0);
        DType outType = c.outTensorType().dtype();
        if (!in.dtype().isFloat() || !outType.isFloat()) return Arrays.asList((Expr) null);
        long[] inShape = Grads.staticShape(in, c.op());
        long axis = a.axis() == null ? 0 : a.axis() < 0 ? a.axis() + in.rank() : a.axis();
        Expr w = product ? call("multiply", g, c.out()) : g;
        Expr reversed = call("reverse", Grads.attrs("axis", axis), w);
        Expr summed = call("cumsum", Grads.attrs("axis", axis, "exclusive", a.exclusive()), reversed);
        Expr adj = call("reverse", Grads.attrs("axis", axis), summed);
        if (a.axis() == null) adj = call("reshape", Grads.attrs("newshape", inShape), adj);
        if (product) adj = call("divide", adj, outType.equals(in.dtype()) ? c.arg(0) : call("cast", Grads.attrs("dtype", outType.toString()), c.arg(0)));
        if (!outType.equals(in.dtype())) adj = call("cast", Grads.attrs("dtype", in.dtype().toString()), adj);
        return List.of(adj);
    }
}
