package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * ONNX operators that work along whole axes or build index structure: Trilu, CumSum/CumProd,
 * Hardmax, OneHot, TopK, Einsum, LpNormalization, EyeLike, Compress, CenterCropPad, Det, NonZero, Unique.
 */
final class MiscConverters {
    private MiscConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("Trilu", MiscConverters::trilu);
        b.add("CumSum", n -> scan(n, "cumsum"));
        b.add("CumProd", n -> scan(n, "cumprod"));
        b.add("Hardmax", MiscConverters::hardmax);
        b.add("OneHot", MiscConverters::oneHot);
        b.add("TopK", MiscConverters::topk);
        b.add("Einsum", n -> List.of(n.call("einsum", List.of(new Tuple(n.inputs())), "equation", n.attrString("equation", ""))));
        b.add("LpNormalization", n -> {
            Expr x = n.input(0);
            long axis = n.attrInt("axis", -1), p = n.attrInt("p", 2);
            Expr norm = switch ((int) p) {
                case 1 -> n.call("sum", List.of(n.call("abs", x)), "axis", new long[] {axis}, "keepdims", true);
                case 2 -> n.call("sqrt", n.call("sum", List.of(n.call("multiply", x, x)), "axis", new long[] {axis}, "keepdims", true));
                default -> throw n.unsupported("attribute p must be 1 or 2, got " + p);
            };
            // A zero norm leaves the zero vector unchanged (the ONNX reference divides by 1 there).
            Expr zero = MathConverters.scalar(n, x, 0);
            Expr safe = n.call("where", n.call("equal", norm, zero), MathConverters.scalar(n, x, 1), norm);
            return List.of(n.call("divide", x, safe));
        });
        b.add("EyeLike", MiscConverters::eyeLike);
        b.add("Compress", MiscConverters::compress);
        b.add("CenterCropPad", MiscConverters::centerCropPad);
        b.add("Det", n -> List.of(n.call("det", n.input(0))));
        b.add("Unique", n -> {
            boolean sorted = n.attrInt("sorted", 1) != 0;
            Expr u = n.hasAttr("axis")
                    ? n.call("unique", List.of(n.input(0)), "sorted", sorted, "axis", n.attrInt("axis", 0))
                    : n.call("unique", List.of(n.input(0)), "sorted", sorted);
            List<Expr> outs = new ArrayList<>();
            for (int i = 0; i < 4; i++) outs.add(new TupleGetItem(u, i)); // Y, indices, inverse_indices, counts
            return outs;
        });
        // NonZero gives [rank, count] int64; argwhere gives [count, rank] int32.
        b.add("NonZero", n -> List.of(n.call("transpose", List.of(MathConverters.cast(n, n.call("argwhere", n.input(0)), DType.INT64)),
                "axes", new long[] {1, 0})));
    }

    /** The static size of dim {@code axis} (possibly negative) of input {@code i}; unsupported when dynamic. */
    private static int staticDim(OnnxNode n, int i, long axis, String why) {
        TensorType t = n.inputType(i);
        int a = (int) (axis < 0 ? axis + t.rank() : axis);
        if (a < 0 || a >= t.rank()) throw n.unsupported("axis " + axis + " is out of range for rank " + t.rank());
        Dim d = t.shape().get(a);
        if (!d.isStatic()) throw n.unsupported(why + " needs a static dim " + a + ", got " + t);
        return Math.toIntExact(d.value());
    }

    /**
     * Trilu keeps the upper (or lower) triangle of the last two dims, shifted by diagonal k: element
     * (i, j) stays when j - i >= k (upper) or j - i <= k (lower). The mask is a constant, so the
     * last two dims must be static.
     */
    private static List<Expr> trilu(OnnxNode n) {
        boolean upper = n.attrInt("upper", 1) != 0;
        long k = n.hasInput(1) ? n.constantInts(1, "k")[0] : 0;
        int rank = n.inputRank(0);
        if (rank < 2) throw n.unsupported("input must have rank >= 2, got " + rank);
        int rows = staticDim(n, 0, -2, "the triangle mask"), cols = staticDim(n, 0, -1, "the triangle mask");
        NDArray mask = NDArray.zeros(DType.BOOL, rows, cols);
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                long diff = (long) j - i;
                mask.setLong(i * cols + j, upper ? (diff >= k ? 1 : 0) : (diff <= k ? 1 : 0));
            }
        }
        Expr x = n.input(0);
        return List.of(n.call("where", OnnxNode.constant(mask), x, MathConverters.scalar(n, x, 0)));
    }

    /** CumSum/CumProd: the axis is a (constant) input; reverse runs the scan from the end by reversing around it. */
    private static List<Expr> scan(OnnxNode n, String op) {
        long[] axisValue = n.constantInts(1, "axis");
        if (axisValue.length != 1) throw n.unsupported("axis must hold one value, got " + axisValue.length);
        long axis = axisValue[0];
        boolean exclusive = n.attrInt("exclusive", 0) != 0, reverse = n.attrInt("reverse", 0) != 0;
        Expr x = n.input(0);
        if (reverse) x = n.call("reverse", List.of(x), "axis", axis);
        Expr y = n.call(op, List.of(x), "axis", axis, "exclusive", exclusive);
        if (reverse) y = n.call("reverse", List.of(y), "axis", axis);
        return List.of(y);
    }

    /**
     * Hardmax: 1 at the first maximum along the axis, 0 elsewhere — one_hot(argmax). Before opset 13
     * the input is coerced to 2-D [outer, inner] at the axis (default 1) and the maximum is taken
     * over the whole inner block.
     */
    private static List<Expr> hardmax(OnnxNode n) {
        TensorType t = n.inputType(0);
        Expr x = n.input(0);
        if (n.opset() >= 13) {
            long axis = n.attrInt("axis", -1);
            int depth = staticDim(n, 0, axis, "Hardmax");
            long a = axis < 0 ? axis + t.rank() : axis;
            return List.of(oneHotOfArgmax(n, x, a, depth, t.dtype()));
        }
        long axis = n.attrInt("axis", 1);
        if (axis < 0) axis += t.rank();
        if (!t.isStatic()) throw n.unsupported("Hardmax before opset 13 needs a static shape, got " + t);
        int[] s = t.staticShape();
        long outer = 1, inner = 1;
        for (int i = 0; i < s.length; i++) {
            if (i < axis) outer *= s[i];
            else inner *= s[i];
        }
        Expr flat = n.call("reshape", List.of(x), "newshape", new long[] {outer, inner});
        Expr h = oneHotOfArgmax(n, flat, 1, Math.toIntExact(inner), t.dtype());
        return List.of(n.call("reshape", List.of(h), "newshape", Arrays.stream(s).asLongStream().toArray()));
    }

    private static Expr oneHotOfArgmax(OnnxNode n, Expr x, long axis, int depth, DType dtype) {
        Expr idx = n.call("argmax", List.of(x), "axis", new long[] {axis}, "keepdims", false, "select_last_index", false);
        return n.call("one_hot", List.of(idx, scalarOf(dtype, 1), scalarOf(dtype, 0)), "depth", (long) depth, "axis", axis,
                "dtype", dtype.toString());
    }

    private static Expr scalarOf(DType dtype, double v) {
        return OnnxNode.constant(NDArray.fromDoubles(dtype, new int[0], new double[] {v}));
    }

    /**
     * OneHot(indices, depth, values=[off, on]): negative indices count from depth (ONNX), out-of-range
     * ones give a row of off values (one_hot's rule); non-integer indices are truncated first.
     */
    private static List<Expr> oneHot(OnnxNode n) {
        NDArray depthValue = n.requireConstant(1, "depth");
        if (depthValue.elementCount() != 1) throw n.unsupported("depth must hold one value, got " + depthValue.elementCount());
        long depth = depthValue.dtype().isFloat() ? (long) depthValue.getDouble(0) : depthValue.getLong(0);
        long axis = n.attrInt("axis", -1);
        Expr idx = n.input(0);
        DType it = n.inputType(0).dtype();
        if (!it.equals(DType.INT64)) idx = MathConverters.cast(n, idx, DType.INT64);
        Expr normalized = n.call("where", n.call("less", idx, scalarOf(DType.INT64, 0)),
                n.call("add", idx, scalarOf(DType.INT64, depth)), idx);
        Expr values = n.input(2);
        Expr off = n.call("take", List.of(values, scalarOf(DType.INT64, 0)), "axis", 0L, "mode", "fast");
        Expr on = n.call("take", List.of(values, scalarOf(DType.INT64, 1)), "axis", 0L, "mode", "fast");
        int outRank = n.inputRank(0) + 1;
        if (axis < -outRank || axis >= outRank) throw n.unsupported("axis " + axis + " is out of range for output rank " + outRank);
        return List.of(n.call("one_hot", List.of(normalized, on, off), "depth", depth, "axis", axis));
    }

    /** TopK: K is an input since opset 10 (an attribute before); indices are int64. */
    private static List<Expr> topk(OnnxNode n) {
        long k;
        if (n.opset() < 10) {
            k = n.attrInt("k", -1);
        } else {
            long[] kv = n.constantInts(1, "K");
            if (kv.length != 1) throw n.unsupported("K must hold one value, got " + kv.length);
            k = kv[0];
        }
        if (k < 0) throw n.unsupported("k must be >= 0, got " + k);
        boolean largest = n.attrInt("largest", 1) != 0;
        n.ignore("sorted"); // sorted=0 leaves the order unspecified; sorted output satisfies it too
        long axis = n.attrInt("axis", -1);
        if (k == 0) {
            // topk treats k < 1 as "all"; ONNX K=0 means empty outputs.
            throw n.unsupported("K=0 is not supported");
        }
        Expr t = n.call("topk", List.of(n.input(0)), "k", k, "axis", axis, "ret_type", "both", "is_ascend", !largest, "dtype", "int64");
        return List.of(new TupleGetItem(t, 0), new TupleGetItem(t, 1));
    }

    /** EyeLike: ones on diagonal k of a 2-D shape like the input's, in attribute dtype (default: the input's). */
    private static List<Expr> eyeLike(OnnxNode n) {
        TensorType t = n.inputType(0);
        if (t.rank() != 2 || !t.isStatic()) throw n.unsupported("input must be a static 2-D tensor, got " + t);
        DType dtype = n.hasAttr("dtype") ? OnnxDTypes.require((int) n.attrInt("dtype", 0), n.where() + ": attribute 'dtype'") : t.dtype();
        long k = n.attrInt("k", 0);
        int rows = t.staticShape()[0], cols = t.staticShape()[1];
        NDArray eye = NDArray.zeros(dtype, rows, cols);
        for (int i = 0; i < rows; i++) {
            long j = i + k;
            if (j >= 0 && j < cols) eye.setLong(i * cols + (int) j, 1);
        }
        return List.of(OnnxNode.constant(eye));
    }

    /**
     * Compress keeps the slices along axis (or of the flattened input) whose condition is true; the
     * condition may be shorter than the axis. The output size depends on the condition's values, so
     * it must be a constant.
     */
    private static List<Expr> compress(OnnxNode n) {
        NDArray cond = n.requireConstant(1, "condition");
        List<Long> keep = new ArrayList<>();
        for (int i = 0; i < cond.elementCount(); i++) if (cond.getBoolean(i)) keep.add((long) i);
        NDArray indices = NDArray.fromLongs(DType.INT64, new int[] {keep.size()}, keep.stream().mapToLong(Long::longValue).toArray());
        Expr x = n.input(0);
        if (!n.hasAttr("axis")) {
            return List.of(n.call("take", List.of(n.call("reshape", List.of(x), "newshape", new long[] {-1}), OnnxNode.constant(indices)),
                    "axis", 0L, "mode", "fast"));
        }
        long axis = n.attrInt("axis", 0);
        int size = staticDim(n, 0, axis, "Compress");
        if (cond.elementCount() > size) throw n.unsupported("condition has " + cond.elementCount() + " values but the axis has " + size);
        return List.of(n.call("take", List.of(x, OnnxNode.constant(indices)), "axis", axis, "mode", "fast"));
    }

    /**
     * CenterCropPad: along each axis (all by default) crop or zero-pad the input to the target size,
     * centered; when the difference is odd the extra element is cropped from / padded at the end.
     */
    private static List<Expr> centerCropPad(OnnxNode n) {
        TensorType t = n.inputType(0);
        long[] target = n.constantInts(1, "shape");
        int rank = t.rank();
        long[] axes = n.attrInts("axes");
        if (axes == null) {
            axes = new long[rank];
            for (int i = 0; i < rank; i++) axes[i] = i;
        }
        if (axes.length != target.length) throw n.unsupported("shape has " + target.length + " values for " + axes.length + " axes");
        long[] begin = new long[rank], end = new long[rank];
        List<List<Long>> pad = new ArrayList<>();
        boolean padding = false;
        for (int i = 0; i < rank; i++) {
            end[i] = Long.MAX_VALUE;
            pad.add(List.of(0L, 0L));
        }
        boolean cropping = false;
        for (int k = 0; k < axes.length; k++) {
            int a = (int) (axes[k] < 0 ? axes[k] + rank : axes[k]);
            long dim = staticDim(n, 0, a, "CenterCropPad");
            if (dim > target[k]) {
                begin[a] = (dim - target[k]) / 2;
                end[a] = begin[a] + target[k];
                cropping = true;
            } else if (dim < target[k]) {
                long before = (target[k] - dim) / 2;
                pad.set(a, List.of(before, target[k] - dim - before));
                padding = true;
            }
        }
        Expr x = n.input(0);
        if (cropping) x = n.call("strided_slice", List.of(x), "begin", begin, "end", end);
        if (padding) x = n.call("nn.pad", List.of(x, MathConverters.scalar(n, x, 0)), "pad_width", pad, "pad_mode", "constant");
        return List.of(x);
    }
}
