package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.nn.Pad;
import dev.relayfarm.ops.transform.Arange;
import dev.relayfarm.ops.transform.Concatenate;
import dev.relayfarm.ops.transform.Gather;
import dev.relayfarm.ops.transform.LayoutTransform;
import dev.relayfarm.ops.transform.OneHot;
import dev.relayfarm.ops.transform.Reverse;
import dev.relayfarm.ops.transform.ShapeOf;
import dev.relayfarm.ops.transform.Split;
import dev.relayfarm.ops.transform.Stack;
import dev.relayfarm.ops.transform.StridedSlice;
import dev.relayfarm.ops.transform.Take;
import dev.relayfarm.ops.transform.Transpose;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Compute rules of the shape and data-movement operators ({@code TransformOps}, plus
 * {@code nn.pad} and {@code nn.batch_flatten}): each output element reads one input element (or a
 * constant), so all are single injective stages. Index arithmetic is int64; data used as an index
 * ({@code take}, {@code gather}, {@code gather_nd}, {@code one_hot}) is cast to int64 and kept in range
 * (clamped) so that a kernel never reads outside its input: where the interpreter rejects an
 * out-of-range index ({@code take} mode "fast", {@code gather}), the kernel's result for it is
 * unspecified but memory-safe. ({@code reinterpret}, a bit cast, is element-wise: {@link ElementwiseComputes}.)
 */
final class TransformComputes {
    private TransformComputes() {}

    static void register(OpComputes.Rules r) {
        // row-major reinterpretations of the same elements: the declared output shape says it all
        for (String op : List.of("reshape", "reshape_like", "squeeze", "expand_dims", "nn.batch_flatten", "copy")) r.add(op, TransformComputes::reshape);
        r.add("transpose", TransformComputes::transpose);
        r.add("concatenate", TransformComputes::concatenate);
        r.add("stack", TransformComputes::stack);
        r.add("split", TransformComputes::split);
        r.add("strided_slice", TransformComputes::stridedSlice);
        r.add("take", TransformComputes::take);
        r.add("gather", TransformComputes::gather);
        r.add("gather_nd", TransformComputes::gatherNd);
        r.add("broadcast_to", c -> {
            Tensor x = c.in(0);
            return List.of(Te.compute(c.name(), c.outShape(), ix -> x.at(Elementwise.broadcastIndex(ix, x.shape()))));
        });
        r.add("tile", TransformComputes::tile);
        r.add("reverse", TransformComputes::reverse);
        r.add("layout_transform", TransformComputes::layoutTransform);
        r.add("one_hot", TransformComputes::oneHot);
        r.add("arange", TransformComputes::arange);
        r.add("shape_of", TransformComputes::shapeOf);
        r.add("zeros", c -> fill(c, Te.zero(c.outDtype())));
        r.add("ones", c -> fill(c, ElementwiseComputes.cast(Te.constant(DType.INT64, 1), c.outDtype())));
        r.add("zeros_like", c -> fill(c, Te.zero(c.outDtype())));
        r.add("ones_like", c -> fill(c, ElementwiseComputes.cast(Te.constant(DType.INT64, 1), c.outDtype())));
        r.add("full", c -> fill(c, ElementwiseComputes.cast(c.in(0).at(), c.outDtype())));
        r.add("full_like", c -> fill(c, ElementwiseComputes.cast(c.in(1).at(), c.outDtype())));
        r.add("nn.pad", TransformComputes::pad);
    }

    private static List<Compute> fill(OpCall c, PrimExpr value) {
        return List.of(Te.compute(c.name(), c.outShape(), ix -> value));
    }

    /** Row-major flat offset of {@code ix} in {@code shape}. */
    static PrimExpr flatten(List<? extends PrimExpr> ix, List<Integer> shape) {
        PrimExpr flat = PrimExpr.of(0);
        long stride = 1;
        for (int d = shape.size() - 1; d >= 0; d--) {
            flat = ix.get(d).mul(stride).add(flat);
            stride *= shape.get(d);
        }
        return flat;
    }

    /** The index in {@code shape} of the row-major flat offset {@code flat}. */
    static List<PrimExpr> unflatten(PrimExpr flat, List<Integer> shape) {
        List<PrimExpr> idx = new ArrayList<>();
        long stride = 1;
        for (int d = shape.size() - 1; d >= 0; d--) {
            idx.addFirst(flat.div(stride).mod(shape.get(d)));
            stride *= shape.get(d);
        }
        return idx;
    }

    private static List<Compute> reshape(OpCall c) {
        Tensor x = c.in(0);
        List<Integer> out = c.outShape();
        long n = x.shape().stream().mapToLong(Integer::longValue).reduce(1, (a, b) -> a * b);
        long m = out.stream().mapToLong(Integer::longValue).reduce(1, (a, b) -> a * b);
        if (n != m) throw c.fail("cannot reshape " + x.shape() + " (" + n + " elements) to " + out);
        if (x.shape().equals(out)) return List.of(Te.compute(c.name(), out, x::at));
        return List.of(Te.compute(c.name(), out, ix -> x.at(unflatten(flatten(ix, out), x.shape()))));
    }

    private static List<Compute> transpose(OpCall c) {
        Tensor x = c.in(0);
        int rank = x.rank();
        List<Long> axes = c.attrs(Transpose.TransposeAttrs.class).axes();
        int[] perm = new int[rank];
        for (int d = 0; d < rank; d++) perm[d] = axes == null || axes.isEmpty() ? rank - 1 - d : ElementwiseComputes.normalizeAxis(c, axes.get(d), rank);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            PrimExpr[] src = new PrimExpr[rank];
            for (int d = 0; d < rank; d++) src[perm[d]] = ix.get(d);
            return x.at(src);
        }));
    }

    /** A select chain over the inputs: output coordinate {@code k} along the axis falls in one input's range. */
    private static List<Compute> concatenate(OpCall c) {
        List<Tensor> in = c.inputs();
        int axis = ElementwiseComputes.normalizeAxis(c, c.attrs(Concatenate.ConcatenateAttrs.class).axis(), in.getFirst().rank());
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            int[] offsets = new int[in.size()];
            for (int i = 1; i < in.size(); i++) offsets[i] = offsets[i - 1] + in.get(i - 1).shape().get(axis);
            PrimExpr result = null;
            for (int i = in.size() - 1; i >= 0; i--) {
                List<PrimExpr> idx = new ArrayList<>(ix);
                PrimExpr j = ix.get(axis).sub(offsets[i]);
                // an input computed in the kernel (a producer inlined here) is read at its index clamped into its
                // extent (the selects discard what is read outside): the bounds let the simplifier reduce the divisions
                // of the producer's index arithmetic
                if (in.get(i) instanceof Compute && in.size() > 1) j = j.max(PrimExpr.of(0)).min(PrimExpr.of(in.get(i).shape().get(axis) - 1));
                idx.set(axis, j);
                PrimExpr v = in.get(i).at(idx);
                result = result == null ? v : new Select(ix.get(axis).lt(offsets[i + 1]), v, result);
            }
            return result;
        }));
    }

    private static List<Compute> stack(OpCall c) {
        List<Tensor> in = c.inputs();
        int axis = ElementwiseComputes.normalizeAxis(c, c.attrs(Stack.StackAttrs.class).axis(), in.getFirst().rank() + 1);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> idx = new ArrayList<>(ix);
            idx.remove(axis);
            PrimExpr result = in.getLast().at(idx);
            for (int i = in.size() - 2; i >= 0; i--) result = new Select(ix.get(axis).lt(i + 1), in.get(i).at(idx), result);
            return result;
        }));
    }

    private static List<Compute> split(OpCall c) {
        Tensor x = c.in(0);
        int axis = ElementwiseComputes.normalizeAxis(c, c.attrs(Split.SplitAttrs.class).axis(), x.rank());
        List<Compute> out = new ArrayList<>();
        int offset = 0;
        for (int i = 0; i < c.outputs().size(); i++) {
            int off = offset;
            out.add(Te.compute(c.name() + "_" + i, c.outShape(i), ix -> {
                List<PrimExpr> idx = new ArrayList<>(ix);
                idx.set(axis, ix.get(axis).add(off));
                return x.at(idx);
            }));
            offset += c.outShape(i).get(axis);
        }
        return out;
    }

    private static List<Compute> stridedSlice(OpCall c) {
        Tensor x = c.in(0);
        long[][] s = StridedSlice.resolved(x.shape().stream().mapToInt(Integer::intValue).toArray(), c.attrs(StridedSlice.StridedSliceAttrs.class));
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> idx = new ArrayList<>();
            for (int d = 0; d < ix.size(); d++) idx.add(PrimExpr.of(s[d][0]).add(ix.get(d).mul(s[d][2])));
            return x.at(idx);
        }));
    }

    /** {@code v} (an index read from data) as int64 clamped into {@code [0, n)}. */
    private static PrimExpr clampIndex(PrimExpr v, int n) {
        PrimExpr i = v.dtype().equals(DType.INT64) ? v : new Cast(DType.INT64, v);
        return i.max(PrimExpr.of(0)).min(PrimExpr.of(n - 1));
    }

    /** A possibly negative index (Python style) normalized, then clamped into {@code [0, n)}. */
    private static PrimExpr pythonIndex(PrimExpr v, int n) {
        PrimExpr i = v.dtype().equals(DType.INT64) ? v : new Cast(DType.INT64, v);
        return clampIndex(new Select(i.lt(0), i.add(n), i), n);
    }

    private static List<Compute> take(OpCall c) {
        Tensor data = c.in(0), indices = c.in(1);
        Take.TakeAttrs a = c.attrs(Take.TakeAttrs.class);
        List<Integer> ds = data.shape();
        int ir = indices.rank();
        if (a.axis() == null) {
            int n = ds.stream().reduce(1, (p, q) -> p * q);
            return List.of(Te.compute(c.name(), c.outShape(), ix -> data.at(unflatten(takeIndex(indices.at(ix), n, a.mode()), ds))));
        }
        int axis = ElementwiseComputes.normalizeAxis(c, a.axis(), data.rank());
        int b = (int) (a.batchDims() < 0 ? a.batchDims() + ir : a.batchDims());
        int n = ds.get(axis);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            // out = data[:axis] + indices[b:] + data[axis+1:]; indices' batch dims are data's first b
            List<PrimExpr> iidx = new ArrayList<>();
            for (int d = 0; d < b; d++) iidx.add(ix.get(d));
            for (int d = b; d < ir; d++) iidx.add(ix.get(axis + d - b));
            List<PrimExpr> didx = new ArrayList<>();
            for (int d = 0; d < axis; d++) didx.add(ix.get(d));
            didx.add(takeIndex(indices.at(iidx), n, a.mode()));
            for (int d = axis + 1; d < ds.size(); d++) didx.add(ix.get(axis + ir - b + d - axis - 1));
            return data.at(didx);
        }));
    }

    private static PrimExpr takeIndex(PrimExpr v, int n, String mode) {
        PrimExpr i = v.dtype().equals(DType.INT64) ? v : new Cast(DType.INT64, v);
        if (mode.equals("wrap")) return i.mod(PrimExpr.of(n)).add(n).mod(PrimExpr.of(n));
        return clampIndex(i, n);
    }

    private static List<Compute> gather(OpCall c) {
        Tensor data = c.in(0), indices = c.in(1);
        int axis = ElementwiseComputes.normalizeAxis(c, c.attrs(Gather.GatherAttrs.class).axis(), data.rank());
        int n = data.shape().get(axis);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> idx = new ArrayList<>(ix);
            idx.set(axis, pythonIndex(indices.at(ix), n));
            return data.at(idx);
        }));
    }

    private static List<Compute> gatherNd(OpCall c) {
        Tensor data = c.in(0), indices = c.in(1);
        // batch_dims b: the first b dims of Y (the output's first dims) walk data's first b dims in step
        int b = Math.toIntExact(c.attrs(dev.relayfarm.ops.transform.GatherNd.GatherNdAttrs.class).batchDims());
        int m = indices.shape().getFirst();
        int ir = indices.rank();
        List<Integer> ds = data.shape();
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> didx = new ArrayList<>(ix.subList(0, b));
            for (int k = 0; k < m; k++) {
                List<PrimExpr> iidx = new ArrayList<>();
                iidx.add(PrimExpr.of(k));
                iidx.addAll(ix.subList(0, ir - 1));
                didx.add(pythonIndex(indices.at(iidx), ds.get(b + k)));
            }
            didx.addAll(ix.subList(ir - 1, ix.size()));
            return data.at(didx);
        }));
    }

    private static List<Compute> tile(OpCall c) {
        Tensor x = c.in(0);
        List<Integer> out = c.outShape();
        int rank = out.size(), pad = rank - x.rank();
        return List.of(Te.compute(c.name(), out, ix -> {
            List<PrimExpr> idx = new ArrayList<>();
            for (int d = 0; d < x.rank(); d++) idx.add(ix.get(d + pad).mod(x.shape().get(d)));
            return x.at(idx);
        }));
    }

    private static List<Compute> reverse(OpCall c) {
        Tensor x = c.in(0);
        int axis = ElementwiseComputes.normalizeAxis(c, c.attrs(Reverse.ReverseAttrs.class).axis(), x.rank());
        int n = x.shape().get(axis);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> idx = new ArrayList<>(ix);
            idx.set(axis, PrimExpr.of(n - 1).sub(ix.get(axis)));
            return x.at(idx);
        }));
    }

    /** One axis of a layout string: primal ({@code factor == 0}, upper case) or a sub-axis of {@code factor}. */
    private record LayoutAxis(char primal, int factor) {}

    private static List<LayoutAxis> layout(OpCall c, String text) {
        List<LayoutAxis> axes = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            int j = i;
            while (j < text.length() && Character.isDigit(text.charAt(j))) j++;
            if (j >= text.length()) throw c.fail("malformed layout " + text);
            char ch = text.charAt(j);
            if (j == i) {
                if (!Character.isUpperCase(ch)) throw c.fail("layout " + text + ": sub-axis " + ch + " needs a factor");
                axes.add(new LayoutAxis(ch, 0));
            } else {
                axes.add(new LayoutAxis(Character.toUpperCase(ch), Integer.parseInt(text.substring(i, j))));
            }
            i = j + 1;
        }
        return axes;
    }

    private static int blockOf(List<LayoutAxis> l, char primal) {
        for (LayoutAxis a : l) if (a.primal() == primal && a.factor() > 0) return a.factor();
        return 0;
    }

    /**
     * Each source coordinate from the output index. Where the two layouts block a primal axis by sizes
     * that divide one another (NCHW16c to NCHW4c and back, or the same block), the source chunk and lane
     * come from the destination's chunk and lane without dividing the lane index, so the innermost loop
     * reads contiguous runs and vectorizes; otherwise the primal coordinate ({@code outer * block + inner}
     * where the destination blocks the axis) is rebuilt and split again the way the source lays it out.
     */
    private static List<Compute> layoutTransform(OpCall c) {
        Tensor x = c.in(0);
        LayoutTransform.LayoutTransformAttrs a = c.attrs(LayoutTransform.LayoutTransformAttrs.class);
        List<LayoutAxis> src = layout(c, a.srcLayout()), dst = layout(c, a.dstLayout());
        if (src.size() != x.rank()) throw c.fail("layout " + a.srcLayout() + " does not match rank " + x.rank());
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            Map<Character, PrimExpr> outer = new LinkedHashMap<>(), inner = new LinkedHashMap<>();
            for (int d = 0; d < dst.size(); d++) (dst.get(d).factor() > 0 ? inner : outer).put(dst.get(d).primal(), ix.get(d));
            List<PrimExpr> idx = new ArrayList<>();
            for (LayoutAxis ax : src) {
                char p = ax.primal();
                int f = blockOf(dst, p), g = blockOf(src, p);
                PrimExpr o = outer.get(p), i = inner.get(p);
                boolean lane = ax.factor() > 0;
                if (f == g) {
                    idx.add(lane ? i : o);
                } else if (f > 0 && g > 0 && g % f == 0) {
                    // a source lane block holds g/f destination blocks
                    idx.add(lane ? o.mod(g / f).mul(f).add(i) : o.div(g / f));
                } else if (f > 0 && g > 0 && f % g == 0) {
                    // a destination block spans f/g source chunks
                    idx.add(lane ? i.mod(g) : o.mul(f / g).add(i.div(g)));
                } else {
                    PrimExpr primal = f > 0 ? o.mul(f).add(i) : o;
                    idx.add(g == 0 ? primal : lane ? primal.mod(g) : primal.div(g));
                }
            }
            return x.at(idx);
        }));
    }

    private static List<Compute> oneHot(OpCall c) {
        Tensor indices = c.in(0), on = c.in(1), off = c.in(2);
        OneHot.OneHotAttrs a = c.attrs(OneHot.OneHotAttrs.class);
        DType t = c.outDtype();
        int axis = ElementwiseComputes.normalizeAxis(c, a.axis(), indices.rank() + 1);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> idx = new ArrayList<>(ix);
            Var k = ix.get(axis);
            idx.remove(axis);
            PrimExpr i = indices.at(idx);
            PrimExpr i64 = i.dtype().equals(DType.INT64) ? i : new Cast(DType.INT64, i);
            return new Select(new Binary(BinaryOp.EQ, i64, k), ElementwiseComputes.cast(on.at(), t), ElementwiseComputes.cast(off.at(), t));
        }));
    }

    private static List<Compute> arange(OpCall c) {
        Tensor start = c.in(0), step = c.in(2);
        DType t = c.attrs(Arange.ArangeAttrs.class).dtype();
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            if (t.isFloat()) {
                PrimExpr v = new Cast(DType.FLOAT64, start.at()).add(new Cast(DType.FLOAT64, ix.getFirst()).mul(new Cast(DType.FLOAT64, step.at())));
                return ElementwiseComputes.cast(v, t);
            }
            PrimExpr v = new Cast(DType.INT64, start.at()).add(ix.getFirst().mul(new Cast(DType.INT64, step.at())));
            return ElementwiseComputes.cast(v, t);
        }));
    }

    private static List<Compute> shapeOf(OpCall c) {
        Tensor x = c.in(0);
        DType t = c.attrs(ShapeOf.ShapeOfAttrs.class).dtype();
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            PrimExpr v = new IntImm(x.shape().getLast(), t);
            for (int d = x.rank() - 2; d >= 0; d--) v = new Select(ix.getFirst().lt(d + 1), new IntImm(x.shape().get(d), t), v);
            return v;
        }));
    }

    private static List<Compute> pad(OpCall c) {
        Tensor x = c.in(0), fill = c.in(1);
        Pad.PadAttrs a = c.attrs(Pad.PadAttrs.class);
        int rank = x.rank();
        if (a.padWidth().length != rank) throw c.fail("pad_width does not match rank " + rank);
        for (int[] w : a.padWidth()) if (w[0] < 0 || w[1] < 0) throw c.fail("negative pad widths are not supported");
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> idx = new ArrayList<>();
            PrimExpr inside = null;
            for (int d = 0; d < rank; d++) {
                int n = x.shape().get(d);
                PrimExpr j = ix.get(d).sub(a.padWidth()[d][0]);
                switch (a.mode()) {
                    case CONSTANT -> {
                        PrimExpr in = j.ge(PrimExpr.of(0)).and(j.lt(n));
                        boolean padded = a.padWidth()[d][0] > 0 || a.padWidth()[d][1] > 0;
                        boolean clamp = padded && x instanceof Compute;
                        if (padded) inside = inside == null ? in : inside.and(in);
                        // an input computed in the kernel (a producer inlined here) is read on a padded axis at its
                        // index clamped into the input (the select discards what is read outside): the bounds let the
                        // simplifier reduce the divisions of the producer's index arithmetic (a reshape's)
                        idx.add(clamp ? j.max(PrimExpr.of(0)).min(PrimExpr.of(n - 1)) : j);
                    }
                    case EDGE -> idx.add(j.max(PrimExpr.of(0)).min(PrimExpr.of(n - 1)));
                    case REFLECT -> {
                        if (n == 1) {
                            idx.add(PrimExpr.of(0));
                        } else {
                            long period = 2L * (n - 1);
                            PrimExpr m = j.mod(PrimExpr.of(period)).add(period).mod(PrimExpr.of(period));
                            idx.add(new Select(m.lt(n), m, PrimExpr.of(period).sub(m)));
                        }
                    }
                    // a floored modulo (C's % truncates), as the interpreter's Math.floorMod
                    case WRAP -> idx.add(j.mod(PrimExpr.of(n)).add(n).mod(PrimExpr.of(n)));
                }
            }
            PrimExpr v = x.at(idx);
            if (inside == null) return v;
            return new Select(inside, v, ElementwiseComputes.cast(fill.at(), x.dtype()));
        }));
    }
}
