package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.Combiner;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.MathFn;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.ArgReduceAttrs;
import dev.relayfarm.ops.ReduceAttrs;
import dev.relayfarm.ops.ReductionAxes;
import dev.relayfarm.ops.VarianceAttrs;
import dev.relayfarm.ops.nn.Softmax;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Compute rules of the reductions ({@code ReductionOps}) and of {@code nn.softmax}/{@code nn.log_softmax}.
 * Accumulation follows the interpreter: floating-point sums and products accumulate in double
 * (float32 results rounded once at the end), integers and bools in 64 bits (wrapping like the
 * fixed-width result once narrowed; {@code mean} divides the 64-bit sum, truncating); max/min
 * accumulate in the dtype. Such a reduction is two stages: the 64-bit/double accumulator
 * ({@code <op>_acc}) and the output converting it. argmax/argmin are two stages too: the extreme
 * value, then the first (or last) row-major position within the reduced axes holding it.
 *
 * <p>Known differences: NaN inputs (Java's max/min propagate NaN, C comparisons do not) and
 * uint64 max/min above 2^63.
 */
final class ReductionComputes {
    private ReductionComputes() {}

    static void register(OpComputes.Rules r) {
        r.add("sum", c -> fold(c, Combiner.SUM, false));
        r.add("mean", c -> fold(c, Combiner.SUM, true));
        r.add("prod", c -> fold(c, Combiner.PROD, false));
        r.add("max", c -> extreme(c, Combiner.MAX));
        r.add("min", c -> extreme(c, Combiner.MIN));
        r.add("all", c -> extreme(c, Combiner.MIN));
        r.add("any", c -> extreme(c, Combiner.MAX));
        r.add("argmax", c -> argReduce(c, true));
        r.add("argmin", c -> argReduce(c, false));
        r.add("variance", c -> variance(c, false));
        r.add("std", c -> variance(c, true));
        r.add("nn.softmax", c -> softmax(c, false));
        r.add("nn.log_softmax", c -> softmax(c, true));
    }

    /** The reduced axes of a rank-{@code rank} input, normalized and sorted (None/[] = all). */
    private static boolean[] reduced(OpCall c, ReductionAxes a, int rank) {
        boolean[] red = new boolean[rank];
        try {
            for (int ax : a.reducedAxes(c.op(), rank)) red[ax] = true;
        } catch (RuntimeException e) {
            throw c.fail(e.getMessage());
        }
        return red;
    }

    /**
     * {@code out[kept] = reduce over the reduced axes of source(full index)}: a compute over the
     * output shape (keepdims or not) with one reduce axis per reduced input axis.
     */
    private static Compute reduce(String name, List<Integer> outShape, List<Integer> inShape, boolean[] red, boolean keepdims,
                                  Function<List<PrimExpr>, PrimExpr> source, Combiner combiner, Function<DType, PrimExpr> init) {
        List<IterVar> raxes = new ArrayList<>();
        for (int d = 0; d < inShape.size(); d++) if (red[d]) raxes.add(Te.reduceAxis("r" + d, inShape.get(d)));
        return Te.compute(name, outShape, ix -> {
            List<PrimExpr> full = fullIndex(ix, raxes, inShape.size(), red, keepdims, outShape);
            PrimExpr src = source.apply(full);
            if (raxes.isEmpty()) return src;
            return new Reduce(combiner, src, raxes, init.apply(src.dtype()));
        });
    }

    /** The input index from the output index (kept axes) and the reduce variables (reduced axes). */
    private static List<PrimExpr> fullIndex(List<Var> ix, List<IterVar> raxes, int rank, boolean[] red, boolean keepdims, List<Integer> outShape) {
        List<PrimExpr> full = new ArrayList<>();
        int r = 0, o = 0;
        boolean scalarOut = !keepdims && outShape.isEmpty();
        for (int d = 0; d < rank; d++) {
            if (red[d]) {
                full.add(raxes.get(r++).var());
                if (keepdims) o++;
            } else {
                full.add(scalarOut ? PrimExpr.of(0) : ix.get(o++));
            }
        }
        return full;
    }

    /** The accumulator dtype of sums and products: double for floats, 64-bit integers otherwise. */
    private static DType accType(DType t) {
        if (t.isFloat()) return DType.FLOAT64;
        return t.code() == DType.Code.INT ? DType.INT64 : DType.UINT64;
    }

    private static PrimExpr identity(Combiner c, DType t) {
        return switch (c) {
            case SUM -> Te.zero(t);
            case PROD -> Te.constant(t, 1);
            case MAX -> t.isFloat() ? new FloatImm(Double.NEGATIVE_INFINITY, t) : new IntImm(minValue(t), t);
            case MIN -> t.isFloat() ? new FloatImm(Double.POSITIVE_INFINITY, t) : new IntImm(maxValue(t), t);
        };
    }

    private static long minValue(DType t) {
        if (t.code() != DType.Code.INT) return 0;
        return t.bits() == 64 ? Long.MIN_VALUE : -(1L << (t.bits() - 1));
    }

    private static long maxValue(DType t) {
        if (t.isBool()) return 1;
        if (t.code() == DType.Code.UINT) return t.bits() == 64 ? -1L : (1L << t.bits()) - 1; // -1 = all ones for uint64
        return t.bits() == 64 ? Long.MAX_VALUE : (1L << (t.bits() - 1)) - 1;
    }

    private static List<Compute> fold(OpCall c, Combiner combiner, boolean mean) {
        Tensor x = c.in(0);
        ReduceAttrs a = c.attrs(ReduceAttrs.class);
        boolean[] red = reduced(c, a, x.rank());
        DType t = x.dtype(), acc = accType(t);
        long n = count(x.shape(), red);
        Compute sum = reduce(c.name() + "_acc", c.outShape(), x.shape(), red, a.keepdims(), ix -> new Cast(acc, x.at(ix)), combiner, dt -> identity(combiner, dt));
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            PrimExpr v = sum.at(ix);
            if (mean) v = new Binary(BinaryOp.DIV, v, Te.constant(acc, n));
            return ElementwiseComputes.cast(v, t);
        }));
    }

    private static long count(List<Integer> shape, boolean[] red) {
        long n = 1;
        for (int d = 0; d < shape.size(); d++) if (red[d]) n *= shape.get(d);
        return n;
    }

    private static List<Compute> extreme(OpCall c, Combiner combiner) {
        Tensor x = c.in(0);
        ReduceAttrs a = c.attrs(ReduceAttrs.class);
        boolean[] red = reduced(c, a, x.rank());
        return List.of(reduce(c.name(), c.outShape(), x.shape(), red, a.keepdims(), x::at, combiner, dt -> identity(combiner, dt)));
    }

    /**
     * Stage 1: the extreme value per output element. Stage 2: the smallest (largest with
     * select_last_index) row-major position within the reduced axes whose element equals it.
     */
    private static List<Compute> argReduce(OpCall c, boolean isMax) {
        Tensor x = c.in(0);
        ArgReduceAttrs a = c.attrs(ArgReduceAttrs.class);
        boolean[] red = reduced(c, a, x.rank());
        Combiner ext = isMax ? Combiner.MAX : Combiner.MIN;
        Compute best = reduce(c.name() + "_value", c.outShape(), x.shape(), red, a.keepdims(), x::at, ext, dt -> identity(ext, dt));
        List<Integer> inShape = x.shape();
        List<IterVar> raxes = new ArrayList<>();
        for (int d = 0; d < inShape.size(); d++) if (red[d]) raxes.add(Te.reduceAxis("r" + d, inShape.get(d)));
        List<Integer> outShape = c.outShape();
        Combiner pick = a.selectLastIndex() ? Combiner.MAX : Combiner.MIN;
        return List.of(Te.compute(c.name(), outShape, ix -> {
            List<PrimExpr> full = fullIndex(ix, raxes, inShape.size(), red, a.keepdims(), outShape);
            PrimExpr pos = PrimExpr.of(0);
            for (int d = 0, r = 0; d < inShape.size(); d++) if (red[d]) pos = pos.mul(inShape.get(d)).add(raxes.get(r++).var());
            PrimExpr none = PrimExpr.of(a.selectLastIndex() ? -1 : Integer.MAX_VALUE);
            PrimExpr cand = new Select(new Binary(BinaryOp.EQ, x.at(full), best.at(ix)), pos, none);
            return new Reduce(pick, new Cast(DType.INT32, cand), raxes, new IntImm(a.selectLastIndex() ? -1 : Integer.MAX_VALUE, DType.INT32));
        }));
    }

    /** sum((data - mean)^2) / (N - unbiased), the difference and square in the dtype, the sum in double/int64. */
    private static List<Compute> variance(OpCall c, boolean std) {
        Tensor x = c.in(0), mean = c.in(1);
        VarianceAttrs a = c.attrs(VarianceAttrs.class);
        boolean[] red = reduced(c, a, x.rank());
        DType t = x.dtype(), acc = accType(t);
        long n = count(x.shape(), red) - (a.unbiased() ? 1 : 0);
        if (n <= 0 && !t.isFloat()) throw c.fail("integer division by zero (nothing to average)");
        Compute sum = reduce(c.name() + "_acc", c.outShape(), x.shape(), red, a.keepdims(), ix -> {
            PrimExpr d = new Binary(BinaryOp.SUB, x.at(ix), mean.at(broadcast(ix, mean.shape())));
            return new Cast(acc, new Binary(BinaryOp.MUL, d, d));
        }, Combiner.SUM, dt -> Te.zero(dt));
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            PrimExpr v = ElementwiseComputes.cast(new Binary(BinaryOp.DIV, sum.at(ix), Te.constant(acc, n)), t);
            if (!std) return v;
            return ElementwiseComputes.cast(ElementwiseComputes.call(MathFn.SQRT, ElementwiseComputes.cast(v, DType.FLOAT64)), t);
        }));
    }

    /** NumPy broadcasting of a full index onto a (right-aligned) smaller or size-1-dim shape. */
    private static List<PrimExpr> broadcast(List<PrimExpr> ix, List<Integer> inShape) {
        List<PrimExpr> idx = new ArrayList<>();
        int offset = ix.size() - inShape.size();
        for (int d = 0; d < inShape.size(); d++) idx.add(inShape.get(d) == 1 ? PrimExpr.of(0) : ix.get(offset + d));
        return idx;
    }

    /** max, then sum of exp(x - max), then exp(x - max) / sum (or x - max - log(sum)); all in the dtype. */
    private static List<Compute> softmax(OpCall c, boolean log) {
        Tensor x = c.in(0);
        if (!x.dtype().isFloat()) throw c.fail("data must be a float tensor, got " + x.dtype());
        int axis = ElementwiseComputes.normalizeAxis(c, c.attrs(Softmax.SoftmaxAttrs.class).axis(), x.rank());
        boolean[] red = new boolean[x.rank()];
        red[axis] = true;
        List<Integer> keep = new ArrayList<>(x.shape());
        keep.set(axis, 1);
        DType t = x.dtype();
        Compute max = reduce(c.name() + "_max", keep, x.shape(), red, true, x::at, Combiner.MAX, dt -> identity(Combiner.MAX, dt));
        Compute sum = reduce(c.name() + "_sum", keep, x.shape(), red, true, ix -> {
            List<PrimExpr> k = new ArrayList<>(ix);
            k.set(axis, PrimExpr.of(0));
            return ElementwiseComputes.call(MathFn.EXP, new Binary(BinaryOp.SUB, x.at(ix), max.at(k)));
        }, Combiner.SUM, Te::zero);
        return List.of(Te.compute(c.name(), c.outShape(), ix -> {
            List<PrimExpr> k = new ArrayList<>(ix);
            k.set(axis, PrimExpr.of(0));
            PrimExpr shifted = new Binary(BinaryOp.SUB, x.at(ix), max.at(k));
            if (log) return new Binary(BinaryOp.SUB, shifted, ElementwiseComputes.call(MathFn.LOG, sum.at(k)));
            return new Binary(BinaryOp.DIV, ElementwiseComputes.call(MathFn.EXP, shifted), sum.at(k));
        }));
    }
}
