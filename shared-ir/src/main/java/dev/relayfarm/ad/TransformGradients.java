package dev.relayfarm.ad;

import static dev.relayfarm.ad.Grads.attrs;
import static dev.relayfarm.ad.Grads.call;
import static dev.relayfarm.ad.Grads.staticShape;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ops.nn.Pad;
import dev.relayfarm.ops.transform.Concatenate.ConcatenateAttrs;
import dev.relayfarm.ops.transform.ScatterElements;
import dev.relayfarm.ops.transform.ScatterNd;
import dev.relayfarm.ops.transform.ScatterReduction;
import dev.relayfarm.ops.transform.GatherNd.GatherNdAttrs;
import dev.relayfarm.ops.transform.LayoutTransform.LayoutTransformAttrs;
import dev.relayfarm.ops.transform.Split.SplitAttrs;
import dev.relayfarm.ops.transform.Stack.StackAttrs;
import dev.relayfarm.ops.transform.StridedSlice;
import dev.relayfarm.ops.transform.StridedSlice.StridedSliceAttrs;
import dev.relayfarm.ops.transform.Take.TakeAttrs;
import dev.relayfarm.ops.transform.Tile.TileAttrs;
import dev.relayfarm.ops.transform.Transpose.TransposeAttrs;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Gradients of the data-movement operators: each moves the adjoint back the way the data came. */
final class TransformGradients {
    private TransformGradients() {}

    static void register(RuleTable.Registrar<OpGradient> r) {
        // Scatters: with "update" the overwritten positions of data get no adjoint (they are scattered zeros), with
        // "add" data passes it through; either way each update gets the adjoint at the position it went to.
        r.rule("scatter_elements", (c, g) -> {
            ScatterElements.ScatterElementsAttrs a = c.<ScatterElements.ScatterElementsAttrs>parsedAttrs();
            return scatter(c, g, a.reduction(), "gather", Grads.attrs("axis", a.axis()));
        });
        r.rule("scatter_nd", (c, g) -> scatter(c, g, (c.<ScatterNd.ScatterNdAttrs>parsedAttrs()).mode(), "gather_nd", Attrs.EMPTY));
        // Shape-only operators: the adjoint is the output adjoint in the input's shape.
        r.rule("reshape", (c, g) -> List.of(reshapeTo(g, c.argType(0), c.op())));
        r.rule("squeeze", (c, g) -> List.of(reshapeTo(g, c.argType(0), c.op())));
        r.rule("expand_dims", (c, g) -> List.of(reshapeTo(g, c.argType(0), c.op())));
        r.rule("nn.batch_flatten", (c, g) -> List.of(reshapeTo(g, c.argType(0), c.op())));
        // The second argument only lends its shape.
        r.rule("reshape_like", (c, g) -> Arrays.asList(reshapeTo(g, c.argType(0), c.op()), null));
        r.rule("transpose", TransformGradients::transpose);
        r.rule("reverse", (c, g) -> List.of(call("reverse", c.attrs(), g)));
        r.rule("layout_transform", (c, g) -> {
            LayoutTransformAttrs a = c.parsedAttrs();
            // Blocked dims must divide exactly (no padding), so the transform is a bijection and its inverse moves the adjoint back.
            return List.of(call("layout_transform", attrs("src_layout", a.dstLayout(), "dst_layout", a.srcLayout()), g));
        });
        r.rule("broadcast_to", (c, g) -> List.of(Grads.collapseTo(g, c.outTensorType(), c.argType(0), c.op())));
        r.rule("tile", TransformGradients::tile);
        r.rule("concatenate", TransformGradients::concatenate);
        r.rule("stack", TransformGradients::stack);
        r.rule("split", (c, g) -> {
            SplitAttrs a = c.parsedAttrs();
            // The parts tile the input along the axis in order, so their adjoints concatenate back.
            return List.of(call("concatenate", attrs("axis", a.axis()), g));
        });
        r.rule("strided_slice", TransformGradients::stridedSlice);
        r.rule("take", TransformGradients::take);
        r.rule("gather", (c, g) -> {
            // gather reads data[.., indices[i], ..]; every read sends its adjoint back there, duplicates adding up.
            Expr zeros = call("zeros_like", c.arg(0));
            return Arrays.asList(call("scatter_elements", attrs("axis", c.<dev.relayfarm.ops.transform.Gather.GatherAttrs>parsedAttrs().axis(), "reduction", "add"), zeros, c.arg(1), g), null);
        });
        r.rule("gather_nd", TransformGradients::gatherNd);
        r.rule("nn.pad", TransformGradients::pad);
    }


    static Expr reshapeTo(Expr g, TensorType to, String op) {
        return call("reshape", attrs("newshape", staticShape(to, op)), g);
    }

    private static int norm(long axis, int rank) {
        return dev.relayfarm.ops.nn.Rel.axis("gradient", Math.toIntExact(axis), rank);
    }

    private static List<Expr> transpose(GradientCall c, Expr g) {
        TransposeAttrs a = c.parsedAttrs();
        int rank = c.argType(0).rank();
        staticShape(c.argType(0), c.op());
        // out axis i is input axis perm[i]; the inverse permutation puts each back.
        long[] inverse = new long[rank];
        for (int i = 0; i < rank; i++) {
            int from = a.axes() == null ? rank - 1 - i : norm(a.axes().get(i), rank);
            inverse[from] = i;
        }
        return List.of(call("transpose", attrs("axes", inverse), g));
    }

    private static List<Expr> tile(GradientCall c, Expr g) {
        TileAttrs a = c.parsedAttrs();
        long[] in = staticShape(c.argType(0), c.op());
        int rank = Math.max(in.length, a.reps().size());
        // Each output dim is reps[i] copies of the input dim: view it as (reps[i], dim[i]) and sum the copies.
        long[] split = new long[2 * rank];
        long[] copies = new long[rank];
        for (int i = 0; i < rank; i++) {
            int k = i - (rank - in.length);
            int q = i - (rank - a.reps().size());
            split[2 * i] = q < 0 ? 1 : a.reps().get(q);
            split[2 * i + 1] = k < 0 ? 1 : in[k];
            copies[i] = 2L * i;
        }
        Expr summed = call("sum", attrs("axis", copies), call("reshape", attrs("newshape", split), g));
        return List.of(reshapeTo(summed, c.argType(0), c.op()));
    }

    /** Slices of {@code g} along {@code axis}, one per field of the tuple argument, of the fields' extents there. */
    private static List<Expr> concatenate(GradientCall c, Expr g) {
        ConcatenateAttrs a = c.parsedAttrs();
        TupleType in = c.argTupleType(0);
        int rank = c.outTensorType().rank();
        int axis = norm(a.axis(), rank);
        List<Expr> parts = new ArrayList<>();
        long offset = 0;
        for (var t : in.fields()) {
            long n = staticShape((TensorType) t, c.op())[axis];
            parts.add(call("strided_slice", attrs("begin", new long[] {offset}, "end", new long[] {offset + n}, "axes", new long[] {axis}), g));
            offset += n;
        }
        return List.of(new Tuple(parts));
    }

    private static List<Expr> stack(GradientCall c, Expr g) {
        StackAttrs a = c.parsedAttrs();
        TupleType in = c.argTupleType(0);
        int rank = c.outTensorType().rank();
        int axis = norm(a.axis(), rank);
        List<Expr> parts = new ArrayList<>();
        for (int i = 0; i < in.fields().size(); i++) {
            // Field i is the i-th index of the new axis; dropping that unit axis gives the field's shape back.
            Expr slice = call("strided_slice", attrs("begin", new long[] {i}, "end", new long[] {i + 1}, "axes", new long[] {axis}), g);
            parts.add(reshapeTo(slice, (TensorType) in.fields().get(i), c.op()));
        }
        return List.of(new Tuple(parts));
    }

    /**
     * The slice's adjoint scattered back into zeros of the input's shape. Per axis: a negative stride is undone by
     * reversing (the elements then run upwards from the lowest index read); a stride s > 1 by interleaving s - 1
     * zeros after each element (a unit axis padded to s, then merged); what is left is a contiguous block, padded
     * with zeros before and after.
     */
    private static List<Expr> stridedSlice(GradientCall c, Expr g) {
        StridedSliceAttrs a = c.parsedAttrs();
        long[] shape = staticShape(c.argType(0), c.op());
        int[] ishape = Arrays.stream(shape).mapToInt(Math::toIntExact).toArray();
        long[][] slice = StridedSlice.resolved(ishape, a);
        DType dtype = c.argType(0).dtype();
        int rank = shape.length;
        for (long[] s : slice) {
            if (s[1] == 0) return List.of(call("zeros_like", c.arg(0)));
        }
        Expr x = g;
        long[] cur = staticShape(c.outTensorType(), c.op()).clone();
        long[][] width = new long[rank][2];
        for (int i = 0; i < rank; i++) {
            long start = slice[i][0], length = slice[i][1], stride = slice[i][2];
            if (stride < 0) {
                x = call("reverse", attrs("axis", i), x);
                start = start + (length - 1) * stride;
                stride = -stride;
            }
            if (stride > 1) {
                long[] padded = new long[rank + 1];
                long[][] w = new long[rank + 1][2];
                for (int d = 0, e = 0; d <= rank; d++) padded[d] = d == i + 1 ? 1 : cur[e++];
                w[i + 1][1] = stride - 1;
                x = padZeros(call("reshape", attrs("newshape", padded), x), w, dtype);
                cur[i] = length * stride;
                x = call("reshape", attrs("newshape", cur), x);
                long span = (length - 1) * stride + 1;
                x = call("strided_slice", attrs("begin", new long[] {0}, "end", new long[] {span}, "axes", new long[] {i}), x);
                cur[i] = span;
            }
            width[i][0] = start;
            width[i][1] = shape[i] - start - cur[i];
        }
        return List.of(padZeros(x, width, dtype));
    }

    /** {@code nn.pad(x, 0)} with the given {before, after} per axis; a no-op when all are zero. */
    static Expr padZeros(Expr x, long[][] width, DType dtype) {
        boolean any = false;
        List<Object> rows = new ArrayList<>();
        for (long[] w : width) {
            any |= w[0] != 0 || w[1] != 0;
            rows.add(new long[] {w[0], w[1]});
        }
        if (!any) return x;
        return call("nn.pad", attrs("pad_width", rows), x, Grads.scalar(0, dtype));
    }

    /**
     * take reads {@code data[batch, middle, idx, inner]} (data viewed as (batch, middle, n, inner), indices as
     * (batch, perBatch)): the adjoint, viewed as (batch, middle, perBatch, inner), is scatter-added along the
     * third axis at the indices broadcast to that view. The indices are first brought into [0, n) the way the
     * mode reads them (clip clamps, wrap takes the floor modulus; fast promises they are in range).
     */
    private static List<Expr> take(GradientCall c, Expr g) {
        TakeAttrs a = c.parsedAttrs();
        long[] ds = staticShape(c.argType(0), c.op());
        long[] is = staticShape(c.argType(1), c.op());
        int axis, b;
        long[] view;
        if (a.axis() == null) {
            axis = 0;
            b = 0;
            view = new long[] {Grads.staticShapeProduct(c.argType(0), c.op())};
        } else {
            axis = norm(a.axis(), ds.length);
            long bd = a.batchDims() < 0 ? a.batchDims() + is.length : a.batchDims();
            b = (int) bd;
            view = ds;
        }
        long batch = product(view, 0, b), middle = product(view, b, axis), n = view[axis], inner = product(view, axis + 1, view.length);
        long perBatch = product(is, b, is.length);
        DType idt = c.argType(1).dtype();
        Expr idx = c.arg(1);
        idx = switch (a.mode()) {
            case "clip" -> call("minimum", call("maximum", idx, Grads.scalar(0, idt)), Grads.scalar(n - 1, idt));
            case "wrap" -> call("floor_mod", idx, Grads.scalar(n, idt));
            default -> idx;
        };
        long[] gview = {batch, middle, perBatch, inner};
        Expr wideIdx = call("broadcast_to", attrs("shape", gview), call("reshape", attrs("newshape", new long[] {batch, 1, perBatch, 1}), idx));
        Expr zeros = call("zeros_like", call("reshape", attrs("newshape", new long[] {batch, middle, n, inner}), c.arg(0)));
        Expr scattered = call("scatter_elements", attrs("axis", 2, "reduction", "add"), zeros, wideIdx,
                call("reshape", attrs("newshape", gview), g));
        return Arrays.asList(reshapeTo(scattered, c.argType(0), c.op()), null);
    }

    private static long product(long[] s, int from, int to) {
        long p = 1;
        for (int i = from; i < to; i++) p *= s[i];
        return p;
    }

    /**
     * gather_nd reads one slice of data per index column; scatter_nd with mode add sends every slice's adjoint back.
     * With batch dims the columns index within their batch: the batch coordinates (known from the static shape)
     * are prepended to each column, turning it into a plain gather_nd over the first B + M dims.
     */
    private static List<Expr> gatherNd(GradientCall c, Expr g) {
        GatherNdAttrs a = c.parsedAttrs();
        long[] ds = staticShape(c.argType(0), c.op());
        long[] is = staticShape(c.argType(1), c.op());
        Expr idx = c.arg(1);
        int bd = (int) a.batchDims();
        if (bd > 0) {
            DType idt = c.argType(1).dtype();
            long[] y = Arrays.copyOfRange(is, 1, is.length);
            int count = Math.toIntExact(product(y, 0, y.length));
            long[] coords = new long[bd * count];
            for (int j = 0; j < count; j++) {
                // Row-major position j of Y; its first bd coordinates are the batch coordinates.
                long rest = j;
                for (int d = y.length - 1; d >= 0; d--) {
                    long coord = rest % y[d];
                    rest /= y[d];
                    if (d < bd) coords[d * count + j] = coord;
                }
            }
            int[] cshape = new int[y.length + 1];
            cshape[0] = bd;
            for (int d = 0; d < y.length; d++) cshape[d + 1] = Math.toIntExact(y[d]);
            Constant batchIdx = new Constant(NDArray.fromLongs(idt, cshape, coords));
            idx = call("concatenate", attrs("axis", 0), new Tuple(List.of(batchIdx, idx)));
        }
        Expr zeros = call("zeros_like", c.arg(0));
        return Arrays.asList(call("scatter_nd", attrs("mode", "add"), zeros, idx, g), null);
    }

    /**
     * Constant padding: the data's adjoint is the interior of the output adjoint and the pad value's the sum of
     * the rest. Edge, reflect and wrap padding read, along each axis in turn, input position src(i) for output
     * position i: the adjoint undoes the axes last to first, each a scatter-add of the adjoint at src.
     */
    private static List<Expr> pad(GradientCall c, Expr g) {
        Pad.PadAttrs a = c.parsedAttrs();
        long[] in = staticShape(c.argType(0), c.op());
        long[] out = staticShape(c.outTensorType(), c.op());
        int rank = in.length;
        if (a.mode() == Pad.Mode.CONSTANT) {
            long[] begin = new long[rank], end = new long[rank];
            for (int i = 0; i < rank; i++) {
                begin[i] = a.padWidth()[i][0];
                end[i] = begin[i] + in[i];
            }
            Expr inner = call("strided_slice", attrs("begin", begin, "end", end), g);
            TensorType vt = (TensorType) c.argTypes().get(1);
            Expr rest = call("subtract", call("sum", g), call("sum", inner));
            return List.of(inner, reshapeTo(rest, vt, c.op()));
        }
        Expr x = g;
        long[] cur = out.clone();
        for (int d = rank - 1; d >= 0; d--) {
            int before = a.padWidth()[d][0], after = a.padWidth()[d][1];
            if (before + after == 0) continue;
            int n = (int) in[d];
            long[] src = new long[(int) out[d]];
            for (int i = 0; i < src.length; i++) src[i] = Pad.source(a.mode(), i - before, n);
            long pre = product(cur, 0, d), post = product(cur, d + 1, rank);
            long[] gview = {pre, src.length, post};
            Constant idx = new Constant(NDArray.fromLongs(DType.INT64, new int[] {1, src.length, 1}, src));
            Expr wide = call("broadcast_to", attrs("shape", gview), idx);
            long[] targetView = {pre, n, post};
            Expr zeros = call("zeros", attrs("shape", targetView, "dtype", c.argType(0).dtype().toString()));
            Expr scattered = call("scatter_elements", attrs("axis", 1, "reduction", "add"), zeros, wide, call("reshape", attrs("newshape", gview), x));
            cur[d] = n;
            x = call("reshape", attrs("newshape", cur.clone()), scattered);
        }
        return Arrays.asList(x, null);
    }

    private static List<Expr> scatter(GradientCall c, Expr g, ScatterReduction mode, String gather, Attrs gatherAttrs) {
        Expr updates = call(gather, gatherAttrs, g, c.arg(1));
        return switch (mode) {
            case ADD -> java.util.Arrays.asList(g, null, updates);
            case UPDATE -> {
                // Overwritten positions of data get nothing; of several updates aimed at one position only the last one
                // written survives, so only it gets the adjoint: scatter each update's own number, read back which won.
                TensorType u = c.argType(2), d = c.argType(0);
                int n = (int) Grads.staticShapeProduct(u, c.op());
                long[] order = new long[n];
                for (int i = 0; i < n; i++) order[i] = i;
                int[] shape = java.util.Arrays.stream(staticShape(u, c.op())).mapToInt(Math::toIntExact).toArray();
                Expr number = new Constant(NDArray.fromLongs(DType.INT32, shape, order));
                Expr none = call("full", attrs("shape", staticShape(d, c.op()), "dtype", "int32"), Grads.scalar(-1, DType.INT32));
                Expr winner = call(gather, gatherAttrs, call(c.op(), c.attrs(), none, c.arg(1), number), c.arg(1));
                Expr survived = call("where", call("equal", winner, number), updates, call("zeros_like", updates));
                yield java.util.Arrays.asList(call(c.op(), c.attrs(), g, c.arg(1), call("zeros_like", c.arg(2))), null, survived);
            }
            default -> throw new GradientException(c.op() + ": no gradient for reduction " + mode.name().toLowerCase(java.util.Locale.ROOT)
                    + " (update and add have one)");
        };
    }
}
