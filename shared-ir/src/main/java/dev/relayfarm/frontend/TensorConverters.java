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

/** ONNX shape and data-movement operators: Reshape, Transpose, Concat, Slice, Gather, Shape, Constant, ... */
final class TensorConverters {
    private TensorConverters() {}

    static void register(OnnxConverters.Builder b) {
        b.add("Constant", TensorConverters::constant);
        b.add("ConstantOfShape", n -> {
            long[] shape = n.constantInts(0, "shape");
            NDArray value = n.attrTensor("value");
            DType dtype = value == null ? DType.FLOAT32 : value.dtype();
            double v = value == null ? 0 : value.getDouble(0);
            int[] s = Arrays.stream(shape).mapToInt(Math::toIntExact).toArray();
            NDArray out = NDArray.zeros(dtype, s);
            if (v != 0) for (int i = 0; i < out.elementCount(); i++) out.setDouble(i, dtype.isFloat() ? v : value.getLong(0));
            return List.of(OnnxNode.constant(out));
        });
        b.add("Reshape", n -> {
            boolean allowzero = n.attrInt("allowzero", 0) != 0; // 0 means size 0, not "copy the input dim"
            long[] shape = n.opset() < 5 ? n.attrInts("shape") : reshapeTarget(n, allowzero);
            if (shape == null) throw n.unsupported("attribute 'shape' is required");
            n.ignore("consumed_inputs");
            return List.of(n.call("reshape", List.of(n.input(0)), "newshape", shape, "allowzero", allowzero));
        });
        b.add("Flatten", n -> {
            TensorType t = n.inputType(0);
            long axis = n.attrInt("axis", 1);
            if (axis < 0) axis += t.rank();
            if (axis < 0 || axis > t.rank()) throw n.unsupported("axis " + axis + " is out of range for rank " + t.rank());
            if (t.isStatic()) {
                int[] s = t.staticShape();
                long outer = Arrays.stream(s, 0, (int) axis).asLongStream().reduce(1, (x, y) -> x * y);
                return List.of(n.call("reshape", List.of(n.input(0)), "newshape", new long[] {outer, -1}));
            }
            if (axis == 1) return List.of(n.call("nn.batch_flatten", n.input(0)));
            throw n.unsupported("Flatten at axis " + axis + " of a dynamic shape " + t + " is not supported");
        });
        b.add("Transpose", n -> {
            long[] perm = n.attrInts("perm");
            return List.of(n.call("transpose", List.of(n.input(0)), "axes", perm));
        });
        b.add("Concat", n -> {
            if (n.opset() >= 4 && !n.hasAttr("axis")) throw n.unsupported("attribute 'axis' is required");
            return List.of(n.call("concatenate", List.of(new Tuple(n.inputs())), "axis", n.attrInt("axis", 1)));
        });
        b.add("Unsqueeze", n -> {
            long[] axes = n.opset() < 13 ? n.attrInts("axes") : n.constantInts(1, "axes");
            if (axes == null) throw n.unsupported("axes are required");
            int outRank = n.inputRank(0) + axes.length;
            long[] norm = Arrays.stream(axes).map(a -> a < 0 ? a + outRank : a).sorted().toArray();
            Expr x = n.input(0);
            for (long a : norm) x = n.call("expand_dims", List.of(x), "axis", a, "num_newaxis", 1L);
            return List.of(x);
        });
        b.add("Squeeze", n -> {
            long[] axes = n.opset() < 13 ? n.attrInts("axes") : (n.hasInput(1) ? n.constantInts(1, "axes") : null);
            return List.of(n.call("squeeze", List.of(n.input(0)), "axis", axes));
        });
        b.add("Gather", TensorConverters::gather);
        b.add("GatherElements", n -> List.of(n.call("gather", List.of(n.input(0), n.input(1)), "axis", n.attrInt("axis", 0))));
        b.add("Shape", n -> {
            TensorType t = n.inputType(0);
            int rank = t.rank();
            long start = n.attrInt("start", 0), end = n.attrInt("end", rank);
            start = clampAxis(start, rank);
            end = clampAxis(end, rank);
            List<Dim> dims = t.shape().subList((int) start, (int) Math.max(start, end));
            if (dims.stream().allMatch(Dim::isStatic)) {
                long[] v = dims.stream().mapToLong(Dim::value).toArray();
                return List.of(OnnxNode.constant(NDArray.fromLongs(DType.INT64, new int[] {v.length}, v)));
            }
            Expr shape = n.call("shape_of", List.of(n.input(0)), "dtype", "int64");
            if (start == 0 && end == rank) return List.of(shape);
            return List.of(n.call("strided_slice", List.of(shape), "begin", new long[] {start}, "end", new long[] {end}));
        });
        b.add("Size", n -> {
            TensorType t = n.inputType(0);
            if (!t.isStatic()) throw n.unsupported("Size of a dynamic shape " + t + " is not supported");
            long size = Arrays.stream(t.staticShape()).asLongStream().reduce(1, (x, y) -> x * y);
            return List.of(OnnxNode.constant(NDArray.scalar(size)));
        });
        b.add("Slice", TensorConverters::slice);
        b.add("Split", TensorConverters::split);
        b.add("Expand", n -> {
            long[] shape = n.constantInts(1, "shape");
            TensorType t = n.inputType(0);
            List<Dim> target = Arrays.stream(shape).mapToObj(Dim::of).toList();
            List<Dim> out = NnConverters.broadcastDims(n, t.shape(), target);
            if (!out.stream().allMatch(Dim::isStatic)) throw n.unsupported("Expand of a dynamic shape " + t + " is not supported");
            return List.of(n.call("broadcast_to", List.of(n.input(0)), "shape", out.stream().mapToLong(Dim::value).toArray()));
        });
        b.add("Tile", n -> List.of(n.call("tile", List.of(n.input(0)), "reps", n.constantInts(1, "repeats"))));
        b.add("Range", n -> {
            DType dtype = n.inputType(0).dtype();
            // The spec's inputs are scalars; ONNX's own function bodies (AffineGrid's) pass one-element [1] tensors.
            List<Expr> args = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                TensorType t = n.inputType(i);
                if (t.rank() == 0) {
                    args.add(n.input(i));
                } else if (t.isStatic() && Arrays.stream(t.staticShape()).allMatch(d -> d == 1)) {
                    args.add(n.call("reshape", List.of(n.input(i)), "newshape", new long[0]));
                } else {
                    throw n.unsupported("input " + i + " must be a scalar (or hold one element), got " + t);
                }
            }
            return List.of(n.call("arange", args, "dtype", dtype.toString()));
        });
        b.add("Pad", TensorConverters::pad);
    }

    /**
     * Gather: ONNX allows indices in [-n, n), negative ones counting from the end; take's "fast" mode
     * rejects them, so constant indices are normalized here and computed ones through
     * {@code where(i < 0, i + n, i)} (with n the static axis size; "wrap" mode when it is dynamic,
     * which agrees on every valid index).
     */
    private static List<Expr> gather(OnnxNode n) {
        long axis = n.attrInt("axis", 0);
        TensorType t = n.inputType(0);
        int a = (int) (axis < 0 ? axis + t.rank() : axis);
        if (a < 0 || a >= t.rank()) throw n.unsupported("axis " + axis + " is out of range for rank " + t.rank());
        Dim size = t.shape().get(a);
        Expr indices = n.input(1);
        String mode = "fast";
        var known = n.constantInput(1);
        if (known.isPresent() && size.isStatic()) {
            NDArray idx = known.get();
            boolean negative = false;
            for (int i = 0; i < idx.elementCount() && !negative; i++) negative = idx.getLong(i) < 0;
            if (negative) {
                NDArray norm = NDArray.zeros(idx.dtype(), idx.shape());
                for (int i = 0; i < idx.elementCount(); i++) {
                    long v = idx.getLong(i);
                    norm.setLong(i, v < 0 ? v + size.value() : v);
                }
                indices = OnnxNode.constant(norm);
            }
        } else if (size.isStatic()) {
            DType it = n.inputType(1).dtype();
            Expr zero = OnnxNode.constant(NDArray.fromLongs(it, new int[0], new long[] {0}));
            Expr count = OnnxNode.constant(NDArray.fromLongs(it, new int[0], new long[] {size.value()}));
            indices = n.call("where", n.call("less", indices, zero), n.call("add", indices, count), indices);
        } else {
            mode = "wrap";
        }
        return List.of(n.call("take", List.of(n.input(0), indices), "axis", axis, "mode", mode));
    }

    /**
     * Reshape's shape operand as a {@code newshape}: a constant as it is; a shape value with dims known only at run
     * time ({@link ShapeValues#reshapeTarget}) with those dims as {@code 0} (the input's dim at the same position) or
     * one {@code -1}, so the result keeps its {@code ?} dims instead of needing a pinned input.
     */
    private static long[] reshapeTarget(OnnxNode n, boolean allowzero) {
        if (n.hasInput(1) && n.constantInput(1).isEmpty()) {
            var value = n.shapeValue(1);
            if (value.isPresent() && !value.get().scalar()) {
                return ShapeValues.reshapeTarget(value.get(), n.input(0), n.inputType(0), allowzero).orElseThrow(() -> new NeedsConstantException(
                        n.where() + ": shape (input 1) is " + value.get() + ", more than one dim known only at run time; a reshape can infer only"
                                + " one (-1), the others must be constants or the input's dims at the same position",
                        n.proto().getInput(1), List.of()));
            }
        }
        return n.constantInts(1, "shape");
    }

    private static long clampAxis(long a, int rank) {
        if (a < 0) a += rank;
        return Math.max(0, Math.min(rank, a));
    }

    private static List<Expr> constant(OnnxNode n) {
        NDArray v = n.attrTensor("value");
        if (v == null && n.hasAttr("value_float")) v = NDArray.scalar(n.attrFloat("value_float", 0));
        if (v == null && n.hasAttr("value_int")) v = NDArray.scalar(n.attrInt("value_int", 0));
        if (v == null && n.hasAttr("value_floats")) {
            float[] f = n.attrFloats("value_floats");
            v = NDArray.wrap(DType.FLOAT32, new int[] {f.length}, f);
        }
        if (v == null && n.hasAttr("value_ints")) {
            long[] l = n.attrInts("value_ints");
            v = NDArray.wrap(DType.INT64, new int[] {l.length}, l);
        }
        if (v == null) throw n.unsupported("only tensor, float(s) and int(s) constants are supported (string and sparse are not)");
        return List.of(OnnxNode.constant(v));
    }

    private static List<Expr> slice(OnnxNode n) {
        long[] starts, ends, axes, steps;
        if (n.opset() < 10) {
            starts = n.attrInts("starts");
            ends = n.attrInts("ends");
            axes = n.attrInts("axes");
            steps = null;
        } else {
            starts = n.constantInts(1, "starts");
            ends = n.constantInts(2, "ends");
            axes = n.hasInput(3) ? n.constantInts(3, "axes") : null;
            steps = n.hasInput(4) ? n.constantInts(4, "steps") : null;
        }
        int rank = n.inputRank(0);
        if (axes == null) {
            axes = new long[starts.length];
            for (int i = 0; i < axes.length; i++) axes[i] = i;
        }
        if (steps == null) {
            steps = new long[starts.length];
            Arrays.fill(steps, 1);
        }
        long[] normAxes = Arrays.stream(axes).map(a -> a < 0 ? a + rank : a).toArray();
        return List.of(n.call("strided_slice", List.of(n.input(0)), "begin", starts, "end", ends, "strides", steps, "axes", normAxes));
    }

    private static List<Expr> split(OnnxNode n) {
        TensorType t = n.inputType(0);
        long axis = n.attrInt("axis", 0);
        if (axis < 0) axis += t.rank();
        long[] sizes = n.opset() < 13 ? n.attrInts("split") : (n.hasInput(1) ? n.constantInts(1, "split") : null);
        long numOutputs = n.attrInt("num_outputs", n.outputCount());
        if (numOutputs < 1 || numOutputs > Math.max(1, n.outputCount())) {
            throw n.unsupported("num_outputs must be in 1.." + n.outputCount() + " (the node's outputs), got " + numOutputs);
        }
        Object indicesOrSections;
        if (sizes != null) {
            long[] indices = new long[sizes.length - 1];
            long acc = 0;
            for (int i = 0; i < indices.length; i++) indices[i] = acc += sizes[i];
            indicesOrSections = indices;
        } else {
            Dim d = t.shape().get((int) axis);
            if (d.isStatic() && d.value() % numOutputs != 0) {
                // Opset 18: the last chunk is smaller when the size does not divide evenly.
                long chunk = (d.value() + numOutputs - 1) / numOutputs;
                long[] indices = new long[(int) numOutputs - 1];
                for (int i = 0; i < indices.length; i++) indices[i] = chunk * (i + 1);
                indicesOrSections = indices;
            } else {
                indicesOrSections = numOutputs;
            }
        }
        Expr s = n.call("split", List.of(n.input(0)), "indices_or_sections", indicesOrSections, "axis", axis);
        List<Expr> outs = new ArrayList<>();
        for (int i = 0; i < n.outputCount(); i++) outs.add(new TupleGetItem(s, i));
        return outs;
    }

    private static List<Expr> pad(OnnxNode n) {
        String mode = n.attrString("mode", "constant");
        long[] pads;
        Expr value;
        int rank = n.inputRank(0);
        if (n.opset() < 11) {
            pads = n.attrInts(n.opset() < 2 ? "paddings" : "pads");
            value = ElementwiseConverters.scalarLike(n, 0, n.attrFloat("value", 0f));
        } else {
            pads = n.constantInts(1, "pads");
            value = n.hasInput(2) ? n.input(2) : ElementwiseConverters.scalarLike(n, 0, 0);
            if (n.hasInput(3)) {
                long[] axes = n.constantInts(3, "axes");
                long[] full = new long[2 * rank];
                for (int i = 0; i < axes.length; i++) {
                    int a = (int) (axes[i] < 0 ? axes[i] + rank : axes[i]);
                    full[a] = pads[i];
                    full[a + rank] = pads[i + axes.length];
                }
                pads = full;
            }
        }
        if (pads == null || pads.length != 2 * rank) throw n.unsupported("pads must have " + 2 * rank + " values");
        List<List<Long>> width = new ArrayList<>();
        for (int i = 0; i < rank; i++) width.add(List.of(pads[i], pads[i + rank]));
        if (value instanceof dev.relayfarm.ir.Constant c && c.data().rank() == 1) {
            value = n.call("reshape", List.of(value), "newshape", new long[0]);
        }
        return List.of(n.call("nn.pad", List.of(n.input(0), value), "pad_width", width, "pad_mode", mode));
    }
}
