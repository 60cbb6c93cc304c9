package dev.relayfarm.frontend;

import dev.relayfarm.ir.Expr;
import java.util.List;

/** ONNX reductions: ReduceSum/Mean/Max/Min/Prod, the composite L1/L2/LogSum/LogSumExp/SumSquare, ArgMax/ArgMin. */
final class ReduceConverters {
    private ReduceConverters() {}

    static void register(OnnxConverters.Builder b) {
        reduce(b, "ReduceSum", "sum", 13);
        reduce(b, "ReduceMean", "mean", 18);
        reduce(b, "ReduceMax", "max", 18);
        reduce(b, "ReduceMin", "min", 18);
        reduce(b, "ReduceProd", "prod", 18);
        b.add("ReduceSumSquare", n -> List.of(reduceCall(n, "sum", n.call("multiply", n.input(0), n.input(0)), 18)));
        b.add("ReduceL1", n -> List.of(reduceCall(n, "sum", n.call("abs", n.input(0)), 18)));
        b.add("ReduceL2", n -> List.of(n.call("sqrt", reduceCall(n, "sum", n.call("multiply", n.input(0), n.input(0)), 18))));
        b.add("ReduceLogSum", n -> List.of(n.call("log", reduceCall(n, "sum", n.input(0), 18))));
        b.add("ReduceLogSumExp", n -> {
            // log(sum(exp(x - max))) + max, stable for large inputs.
            Expr max = reduceCall(n, "max", n.input(0), 18, true);
            Expr shifted = n.call("exp", n.call("subtract", n.input(0), max));
            Expr lse = n.call("add", n.call("log", reduceCall(n, "sum", shifted, 18, true)), max);
            if (n.attrInt("keepdims", 1) == 0) lse = n.call("squeeze", List.of(lse), "axis", axes(n, 18));
            return List.of(lse);
        });
        arg(b, "ArgMax", "argmax");
        arg(b, "ArgMin", "argmin");
    }

    private static void reduce(OnnxConverters.Builder b, String onnx, String relay, int axesAsInputSince) {
        b.add(onnx, n -> List.of(reduceCall(n, relay, n.input(0), axesAsInputSince)));
    }

    /** The reduced axes (null = all), from the attribute or, since {@code sinceOpset}, the input. */
    private static long[] axes(OnnxNode n, int sinceOpset) {
        long[] axes = n.opset() < sinceOpset ? n.attrInts("axes") : (n.hasInput(1) ? n.constantInts(1, "axes") : null);
        if (axes != null && axes.length == 0) axes = null;
        return axes;
    }

    private static Expr reduceCall(OnnxNode n, String op, Expr x, int sinceOpset) {
        return reduceCall(n, op, x, sinceOpset, n.attrInt("keepdims", 1) != 0);
    }

    private static Expr reduceCall(OnnxNode n, String op, Expr x, int sinceOpset, boolean keepdims) {
        long[] axes = axes(n, sinceOpset);
        boolean noop = n.attrInt("noop_with_empty_axes", 0) != 0; // read even when axes are given
        if (axes == null && noop) return x;
        return n.call(op, List.of(x), "axis", axes, "keepdims", keepdims);
    }

    private static void arg(OnnxConverters.Builder b, String onnx, String relay) {
        b.add(onnx, n -> {
            Expr r = n.call(relay, List.of(n.input(0)), "axis", new long[] {n.attrInt("axis", 0)},
                    "keepdims", n.attrInt("keepdims", 1) != 0, "select_last_index", n.attrInt("select_last_index", 0) != 0);
            return List.of(n.call("cast", List.of(r), "dtype", "int64"));
        });
    }
}
