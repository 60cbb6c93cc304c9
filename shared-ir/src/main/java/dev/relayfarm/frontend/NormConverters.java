package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * ONNX normalization operators written out as Relay arithmetic: LayerNormalization (with its Mean
 * and InvStdDev outputs), RMSNormalization, GroupNormalization, InstanceNormalization and
 * MeanVarianceNormalization. Statistics are taken with {@code mean} over the normalized axes
 * (keepdims) so they broadcast back; {@code stash_type} decides the precision of the statistics
 * (float32 by default: half-precision inputs are widened for them and the result narrowed back).
 */
final class NormConverters {
    private NormConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("LayerNormalization", NormConverters::layerNorm);
        b.add("RMSNormalization", NormConverters::rmsNorm);
        b.add("GroupNormalization", NormConverters::groupNorm);
        b.add("InstanceNormalization", NormConverters::instanceNorm);
        b.add("MeanVarianceNormalization", NormConverters::meanVarianceNorm);
    }

    /** Axes {@code axis..rank-1} with a negative axis counted from the end. */
    private static long[] trailingAxes(OnnxNode n, long axis, int rank) {
        long a = axis < 0 ? axis + rank : axis;
        if (a < 0 || a >= rank) throw n.unsupported("axis " + axis + " is out of range for rank " + rank);
        long[] axes = new long[(int) (rank - a)];
        for (int i = 0; i < axes.length; i++) axes[i] = a + i;
        return axes;
    }

    /** The dtype statistics are computed in: stash_type 1 (float32, the default) or the input's own (-1... any other value). */
    private static DType stashType(OnnxNode n, DType input) {
        long stash = n.attrInt("stash_type", 1);
        if (stash == 1) return DType.FLOAT32;
        return OnnxDTypes.require((int) stash, n.where() + ": attribute 'stash_type'");
    }

    private static Expr cast(OnnxNode n, Expr x, DType from, DType to) {
        return from.equals(to) ? x : n.call("cast", List.of(x), "dtype", to.toString());
    }

    static Expr scalar(DType dtype, double v) {
        NDArray a = NDArray.zeros(dtype);
        a.setDouble(0, v);
        return OnnxNode.constant(a);
    }

    private static Expr mean(OnnxNode n, Expr x, long[] axes) {
        return n.call("mean", List.of(x), "axis", axes, "keepdims", true);
    }

    private static List<Expr> layerNorm(OnnxNode n) {
        TensorType t = n.inputType(0);
        DType in = t.dtype();
        DType st = stashType(n, in);
        long[] axes = trailingAxes(n, n.attrInt("axis", -1), t.rank());
        double eps = n.attrFloat("epsilon", 1e-5f);
        Expr x = cast(n, n.input(0), in, st);
        Expr mu = mean(n, x, axes);
        Expr d = n.call("subtract", x, mu);
        Expr var = mean(n, n.call("multiply", d, d), axes);
        Expr invStd = n.call("divide", scalar(st, 1), n.call("sqrt", n.call("add", var, scalar(st, eps))));
        Expr y = cast(n, n.call("multiply", d, invStd), st, in);
        y = n.call("multiply", y, n.input(1));
        if (n.hasInput(2)) y = n.call("add", y, n.input(2));
        List<Expr> outs = new ArrayList<>(List.of(y));
        outs.add(n.hasOutput(1) ? mu : null);
        outs.add(n.hasOutput(2) ? invStd : null);
        return outs;
    }

    private static List<Expr> rmsNorm(OnnxNode n) {
        TensorType t = n.inputType(0);
        DType in = t.dtype();
        DType st = stashType(n, in);
        long[] axes = trailingAxes(n, n.attrInt("axis", -1), t.rank());
        double eps = n.attrFloat("epsilon", 1e-5f);
        Expr x = cast(n, n.input(0), in, st);
        Expr ms = mean(n, n.call("multiply", x, x), axes);
        Expr y = n.call("divide", x, n.call("sqrt", n.call("add", ms, scalar(st, eps))));
        return List.of(n.call("multiply", cast(n, y, st, in), n.input(1)));
    }

    /**
     * GroupNormalization: channels are split into num_groups groups, each normalized over its
     * channels and all spatial positions. Opset 18 gives scale and bias per group, opset 21 per channel.
     */
    private static List<Expr> groupNorm(OnnxNode n) {
        TensorType t = n.inputType(0);
        if (!t.isStatic()) throw n.unsupported("GroupNormalization of a dynamic shape " + t + " is not supported");
        int[] s = t.staticShape();
        long groups = n.attrInt("num_groups", -1);
        if (groups < 1 || s[1] % groups != 0) throw n.unsupported("num_groups=" + groups + " must divide the " + s[1] + " channels");
        DType in = t.dtype();
        DType st = stashType(n, in);
        double eps = n.attrFloat("epsilon", 1e-5f);
        Expr x = cast(n, n.input(0), in, st);
        Expr grouped = n.call("reshape", List.of(x), "newshape", new long[] {s[0], groups, -1});
        Expr mu = mean(n, grouped, new long[] {2});
        Expr d = n.call("subtract", grouped, mu);
        Expr var = mean(n, n.call("multiply", d, d), new long[] {2});
        Expr norm = n.call("divide", d, n.call("sqrt", n.call("add", var, scalar(st, eps))));
        long[] shape = Arrays.stream(s).asLongStream().toArray();
        long[] perChannel = new long[s.length - 1];
        Arrays.fill(perChannel, 1);
        perChannel[0] = s[1];
        Expr y;
        if (n.opset() < 21 && n.inputType(1).shape().equals(List.of(Dim.of(groups))) && groups != s[1]) {
            // per-group affine parameters apply in the grouped layout
            Expr scale = n.call("reshape", List.of(n.input(1)), "newshape", new long[] {groups, 1});
            Expr bias = n.call("reshape", List.of(n.input(2)), "newshape", new long[] {groups, 1});
            Expr g = n.call("add", n.call("multiply", cast(n, norm, st, in), scale), bias);
            y = n.call("reshape", List.of(g), "newshape", shape);
        } else {
            Expr scale = n.call("reshape", List.of(n.input(1)), "newshape", perChannel);
            Expr bias = n.call("reshape", List.of(n.input(2)), "newshape", perChannel);
            y = n.call("reshape", List.of(cast(n, norm, st, in)), "newshape", shape);
            y = n.call("add", n.call("multiply", y, scale), bias);
        }
        return List.of(y);
    }

    private static List<Expr> instanceNorm(OnnxNode n) {
        TensorType t = n.inputType(0);
        int rank = t.rank();
        if (rank < 3) throw n.unsupported("InstanceNormalization needs N, C and spatial axes, got rank " + rank);
        double eps = n.attrFloat("epsilon", 1e-5f);
        long[] axes = new long[rank - 2];
        for (int i = 0; i < axes.length; i++) axes[i] = i + 2;
        Expr x = n.input(0);
        Expr mu = mean(n, x, axes);
        Expr d = n.call("subtract", x, mu);
        Expr var = mean(n, n.call("multiply", d, d), axes);
        Expr norm = n.call("divide", d, n.call("sqrt", n.call("add", var, ElementwiseConverters.scalarLike(n, 0, eps))));
        long[] perChannel = new long[rank - 1];
        Arrays.fill(perChannel, 1);
        perChannel[0] = -1;
        Expr scale = n.call("reshape", List.of(n.input(1)), "newshape", perChannel);
        Expr bias = n.call("reshape", List.of(n.input(2)), "newshape", perChannel);
        return List.of(n.call("add", n.call("multiply", norm, scale), bias));
    }

    /** As the operator's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9). */
    private static List<Expr> meanVarianceNorm(OnnxNode n) {
        long[] axes = n.attrInts("axes");
        int rank = n.inputRank(0);
        if (axes == null) axes = new long[] {0, 2, 3};
        axes = Arrays.stream(axes).map(a -> a < 0 ? a + rank : a).toArray();
        Expr x = n.input(0);
        Expr mu = mean(n, x, axes);
        Expr meanOfSquares = mean(n, n.call("multiply", x, x), axes);
        Expr variance = n.call("subtract", meanOfSquares, n.call("multiply", mu, mu));
        Expr std = n.call("add", n.call("sqrt", variance), ElementwiseConverters.scalarLike(n, 0, 1e-9));
        return List.of(n.call("divide", n.call("subtract", x, mu), std));
    }
}
