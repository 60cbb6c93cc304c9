package dev.relayfarm.kernel.lower;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BinaryOp;
import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.Load;
import dev.relayfarm.kernel.expr.MathFn;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.loop.Allocate;
import dev.relayfarm.kernel.loop.For;
import dev.relayfarm.kernel.loop.ForKind;
import dev.relayfarm.kernel.loop.IfThenElse;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.Scope;
import dev.relayfarm.kernel.loop.Seq;
import dev.relayfarm.kernel.loop.Stmt;
import dev.relayfarm.kernel.loop.Store;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.ops.algorithm.Unique;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.ops.transform.Arange;
import dev.relayfarm.ops.vision.NonMaxSuppression;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.OpResolver;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Kernels of the operators whose result shape depends on their inputs' values: {@code arange}, {@code argwhere}
 * ({@code NonZero}), {@code unique} and {@code vision.onnx_non_max_suppression}. Each is OPAQUE, so fusion leaves it
 * alone in its Primitive group, and its kernel is written here as a loop nest (TVM writes the same operators with its IR
 * builder, not as tensor expressions: they are sequential scans, not maps).
 *
 * <p>Two ways to size a result, the dissertation's data-dependent shape functions (chapter 5):
 * <ul>
 *   <li><b>Sized before</b> ({@code arange}): a length kernel reads the bounds and gives the result's shape and byte size
 *       ({@link #lengthFunction}); the VM allocates that much, and the kernel takes the length as a row count (its last
 *       input, as a row kernel's: the VM checks it against the result).
 *   <li><b>Sized after</b> (the others): the result's size is known only once the kernel has run, so the kernel writes into
 *       storage of the result's upper bound ({@link #upperBounds}: every input element survives) and then writes each
 *       result's actual shape into one more int64 output; the VM then views the storage with that shape. A result whose
 *       dynamic dimension is not the leading one (unique along an inner axis) is written compactly for its actual
 *       length, so the view is row-major.
 * </ul>
 *
 * <p>Semantics are the interpreter's, with one difference in float comparisons: {@code -0.0} equals {@code 0.0} (NaN equals
 * NaN and sorts last, as Java's {@code Double.compare}). Cost: unique and the score
 * order of NMS compare all pairs (O(n²)), like the project's topk; fine for the sizes these operators see in models
 * (hundreds to a few thousand boxes), not for millions of elements.
 */
public final class DataDependentKernels {
    /** Marks the Primitive function standing for an arange group's length kernel (a key of the kernel table). */
    public static final String LENGTH_FUNCTION = "ArangeLength";

    private static final String NMS = "vision.onnx_non_max_suppression";
    private static final Set<String> OPS = Set.of("arange", "argwhere", "unique", NMS);

    /** No template or knobs: these kernels are written by hand, not searched. */
    private static final ScheduleConfig CONFIG = new ScheduleConfig("data_dependent", java.util.Map.of());

    private DataDependentKernels() {}

    /** Whether {@code primitive} is one data-dependent operator called on its parameters (or the length function of one). */
    public static boolean handles(Function primitive) {
        return operator(primitive).isPresent();
    }

    /** Whether {@code primitive}'s result is sized before the kernel runs, by its {@link #lengthFunction} ({@code arange}). */
    public static boolean sizedBefore(Function primitive) {
        return operator(primitive).map(c -> ((Op) c.callee()).name().equals("arange")).orElse(false);
    }

    /** The key of {@code primitive}'s length kernel ({@code arange}'s): it gives the length's shape ({@code [n]}) and byte size, both int64 {@code [1]}. */
    public static Function lengthFunction(Function primitive) {
        if (!sizedBefore(primitive)) throw new IllegalArgumentException("not an arange group: " + primitive);
        return primitive.withAttrs(primitive.attrs().with(LENGTH_FUNCTION, AttrValue.of(1)));
    }

    /**
     * The result types (a tuple flattened) of a sized-after group with every dynamic dimension at its upper bound: the
     * types of the storage its kernel writes into.
     */
    public static List<TensorType> upperBounds(Function primitive) {
        Call c = operator(primitive).orElseThrow(() -> new IllegalArgumentException("not a data-dependent group: " + primitive));
        return bounds(c, argTypes(primitive, c));
    }

    /** {@link #upperBounds} of call {@code c} of a sized-after operator on tensors of types {@code in}. */
    private static List<TensorType> bounds(Call c, List<TensorType> in) {
        String op = ((Op) c.callee()).name();
        return switch (op) {
            case "argwhere" -> List.of(TensorType.of(DType.INT32, Math.max(1, elements(in.getFirst())), in.getFirst().rank()));
            case "unique" -> {
                TensorType x = in.getFirst();
                Unique.UniqueAttrs a = (Unique.UniqueAttrs) OpRegistry.get(op).parseAttrs(c.attrs());
                long m = a.axis() == null ? elements(x) : x.staticShape()[axis(a, x)];
                TensorType values = a.axis() == null ? TensorType.of(x.dtype(), m) : x;
                TensorType perUnique = TensorType.of(DType.INT64, m);
                yield List.of(values, perUnique, perUnique, perUnique);
            }
            case NMS -> {
                long[] b = longs(in.get(0)), s = longs(in.get(1));
                yield List.of(TensorType.of(DType.INT64, Math.max(1, b[0] * s[1] * b[1]), 3));
            }
            default -> throw new IllegalArgumentException(op + " is sized before its kernel runs, not after");
        };
    }

    /** The kernel of {@code primitive} (a group {@link #handles} says yes to), or of its {@link #lengthFunction}, named {@code name}. */
    public static LoweredKernel lower(Function primitive, String name) {
        Call c = operator(primitive).orElseThrow(() -> new IllegalArgumentException("not a data-dependent group: " + primitive));
        String op = ((Op) c.callee()).name();
        List<TensorType> in = argTypes(primitive, c);
        List<Buffer> inputs = new ArrayList<>();
        for (int k = 0; k < in.size(); k++) {
            Var v = (Var) c.args().get(k);
            TensorType t = in.get(k);
            if (!t.isStatic()) {
                throw new UnsupportedOperationException("kernel " + name + ": " + op + " takes %" + v.name() + " of type " + t
                        + "; its inputs must have static shapes");
            }
            if (elements(t) == 0) throw new UnsupportedOperationException("kernel " + name + ": " + op + " of an empty tensor %" + v.name() + " " + t);
            inputs.add(Buffer.of(v.name(), List.of(Math.toIntExact(elements(t))), t.dtype()));
        }
        if (primitive.attrs().has(LENGTH_FUNCTION)) return arangeLength(name, in, inputs);
        return switch (op) {
            case "arange" -> arange(name, (Arange.ArangeAttrs) OpRegistry.get(op).parseAttrs(c.attrs()), in, inputs);
            case "argwhere" -> argwhere(name, in.getFirst(), inputs.getFirst(), bounds(c, in).getFirst());
            case "unique" -> unique(name, (Unique.UniqueAttrs) OpRegistry.get(op).parseAttrs(c.attrs()), in.getFirst(), inputs.getFirst(), bounds(c, in));
            case NMS -> nms(name, (NonMaxSuppression.NmsAttrs) OpRegistry.get(op).parseAttrs(c.attrs()), in, inputs, bounds(c, in).getFirst());
            default -> throw new IllegalStateException(op);
        };
    }

    /** The operator call that is {@code primitive}'s whole body, taking parameters only; empty for any other group. */
    private static Optional<Call> operator(Function primitive) {
        if (!(primitive.body() instanceof Call c) || !(c.callee() instanceof Op op) || !OPS.contains(op.name())) return Optional.empty();
        for (var a : c.args()) if (!(a instanceof Var v) || !primitive.params().contains(v)) return Optional.empty();
        return Optional.of(c);
    }

    /** The types of {@code c}'s arguments (parameters of {@code primitive}): tensors, or an error naming the one that is not. */
    private static List<TensorType> argTypes(Function primitive, Call c) {
        InferResult types = TypeInference.inferExpr(primitive, OpResolver.REGISTRY);
        Function fn = types.module().main().orElseThrow();
        List<TensorType> out = new ArrayList<>();
        for (var a : c.args()) {
            Type t = types.typeOf(fn.params().get(primitive.params().indexOf((Var) a)));
            if (!(t instanceof TensorType tt)) throw new UnsupportedOperationException(((Op) c.callee()).name() + " takes a tensor, got " + t);
            out.add(tt);
        }
        return out;
    }

    // ---------------------------------------------------------------- arange: sized before

    /** start, stop, step; then the result's shape {@code [n]} and byte size, or -1 for both when no length exists (a zero step, a NaN bound). */
    private static LoweredKernel arangeLength(String name, List<TensorType> in, List<Buffer> inputs) {
        DType t = in.getFirst().dtype();
        Buffer shape = Buffer.of("shape", List.of(1), DType.INT64), bytes = Buffer.of("bytes", List.of(1), DType.INT64);
        PrimExpr start = get(inputs.get(0)), stop = get(inputs.get(1)), step = get(inputs.get(2));
        PrimExpr n;
        if (t.isFloat()) {
            PrimExpr q = call(MathFn.CEIL, f64(stop).sub(f64(start)).div(f64(step)));
            // as the interpreter: a zero or NaN step, or more than INT_MAX elements, has no length; a NaN or negative count is
            // an empty result (NaN fails every comparison, so "q > 0" is false for it)
            PrimExpr valid = f64(step).eq(f64(step)).and(f64(step).ne(new FloatImm(0, DType.FLOAT64)))
                    .and(q.gt(new FloatImm(Integer.MAX_VALUE, DType.FLOAT64)).eq(new dev.relayfarm.kernel.expr.IntImm(0, DType.BOOL)));
            n = new Select(valid, new Select(q.gt(new FloatImm(0, DType.FLOAT64)), new Cast(DType.INT64, q), PrimExpr.of(0)), PrimExpr.of(-1));
        } else {
            PrimExpr span = i64(stop).sub(i64(start)), s = i64(step);
            // C's division truncates; the ceiling is one more when the remainder has the step's sign
            PrimExpr q = span.div(s), r = span.mod(s);
            PrimExpr up = new Select(r.ne(PrimExpr.of(0)).and(r.gt(PrimExpr.of(0)).eq(s.gt(PrimExpr.of(0)))), PrimExpr.of(1), PrimExpr.of(0));
            PrimExpr length = q.add(up).max(PrimExpr.of(0));
            n = new Select(s.ne(PrimExpr.of(0)).and(length.le(PrimExpr.of(Integer.MAX_VALUE))), length, PrimExpr.of(-1));
        }
        long size = (long) t.storageBytes() * t.lanes();
        Stmt body = Seq.of(List.of(set(shape, n), set(bytes, new Select(get(shape).lt(0), PrimExpr.of(-1), get(shape).mul(size)))));
        List<Buffer> params = new ArrayList<>(inputs);
        params.add(shape);
        params.add(bytes);
        List<TensorSpec> specs = specs(params, in, List.of(TensorType.of(DType.INT64, 1), TensorType.of(DType.INT64, 1)), -1);
        return kernel(name, params, inputs.size(), body, specs, "arange_length");
    }

    /** start, stop, step, the length (int64, element 0); the result, of that many elements. */
    private static LoweredKernel arange(String name, Arange.ArangeAttrs a, List<TensorType> in, List<Buffer> inputs) {
        DType t = a.dtype();
        Buffer count = Buffer.of("count", List.of(1), DType.INT64), out = Buffer.of("out", List.of(1), t);
        var i = dev.relayfarm.kernel.expr.Var.index("i");
        PrimExpr start = get(inputs.get(0)), step = get(inputs.get(2));
        // as the static arange rule (TransformComputes): floats in double, integers in int64, then the result's dtype
        PrimExpr v = t.isFloat() ? f64(start).add(new Cast(DType.FLOAT64, i).mul(f64(step))) : i64(start).add(i.mul(i64(step)));
        Stmt body = loop(i, get(count), put(out, i, new Cast(t, v)));
        List<Buffer> params = new ArrayList<>(inputs);
        params.add(count);
        params.add(out);
        List<TensorType> types = new ArrayList<>(in);
        types.add(TensorType.of(DType.INT64, 1));
        List<TensorSpec> specs = specs(params, types, List.of(TensorType.of(t, 1)), 0);
        return new LoweredKernel(new LoweredFunc(name, params, inputs.size() + 1, body), new KernelSignature(name, specs, inputs.size() + 1),
                "arange rows=?", CONFIG);
    }

    // ---------------------------------------------------------------- sized after

    /** The coordinates of each non-zero element in row-major order ({@code [count, rank]} int32), then the shape {@code [count, rank]}. */
    private static LoweredKernel argwhere(String name, TensorType xt, Buffer x, TensorType bound) {
        long[] s = longs(xt);
        int rank = s.length;
        if (rank == 0) throw new UnsupportedOperationException("kernel " + name + ": argwhere of a scalar (its result has no columns)");
        Buffer out = Buffer.of("out", List.of(Math.toIntExact(elements(bound))), DType.INT32), shape = Buffer.of("shape", List.of(2), DType.INT64);
        Buffer found = Buffer.of("found", List.of(1), DType.INT64);
        var i = dev.relayfarm.kernel.expr.Var.index("i");
        List<Stmt> write = new ArrayList<>();
        long stride = 1;
        for (int d = rank - 1; d >= 0; d--) {
            write.add(0, put(out, get(found).mul(rank).add(d), new Cast(DType.INT32, i.div(stride).mod(s[d]))));
            stride *= s[d];
        }
        write.add(set(found, get(found).add(1)));
        Stmt body = local(found, Seq.of(List.of(
                set(found, PrimExpr.of(0)),
                loop(i, PrimExpr.of(elements(xt)), IfThenElse.of(nonZero(at(x, i)), Seq.of(write))),
                put(shape, PrimExpr.of(0), get(found)),
                put(shape, PrimExpr.of(1), PrimExpr.of(rank)))));
        List<Buffer> params = List.of(x, out, shape);
        return kernel(name, params, 1, body, specs(params, List.of(xt), List.of(bound, TensorType.of(DType.INT64, 2)), -1), "argwhere");
    }

    /**
     * unique's four results (values, first index of each, inverse of each input slice, count of each) written for the
     * actual number of unique slices U, then their shapes. Slices are elements (no axis) or the slices along the axis;
     * they are found in order of first occurrence, then ranked (sorted: by lexicographic order of their elements).
     */
    private static LoweredKernel unique(String name, Unique.UniqueAttrs a, TensorType xt, Buffer x, List<TensorType> bounds) {
        long[] s = longs(xt);
        boolean flat = a.axis() == null;
        int axis = flat ? -1 : axis(a, xt);
        long m = flat ? elements(xt) : s[axis];
        long outer = 1, innerElements = 1;
        if (!flat) {
            for (int d = 0; d < axis; d++) outer *= s[d];
            for (int d = axis + 1; d < s.length; d++) innerElements *= s[d];
        }
        long inner = innerElements;
        long sliceLength = outer * inner;
        int mm = Math.toIntExact(m);
        Buffer values = Buffer.of("values", List.of(Math.toIntExact(elements(xt))), xt.dtype());
        Buffer first = Buffer.of("first_index", List.of(mm), DType.INT64), inverse = Buffer.of("inverse", List.of(mm), DType.INT64);
        Buffer counts = Buffer.of("counts", List.of(mm), DType.INT64);
        int rank = flat ? 1 : s.length;
        Buffer valuesShape = Buffer.of("values_shape", List.of(rank), DType.INT64), firstShape = Buffer.of("first_shape", List.of(1), DType.INT64);
        Buffer inverseShape = Buffer.of("inverse_shape", List.of(1), DType.INT64), countsShape = Buffer.of("counts_shape", List.of(1), DType.INT64);
        // scratch: each unique slice's first slice index (first-occurrence order), each slice's unique id, each unique's count and rank
        Buffer ids = Buffer.of("ids", List.of(mm), DType.INT64), of = Buffer.of("of", List.of(mm), DType.INT64);
        Buffer seen = Buffer.of("seen", List.of(mm), DType.INT64), rankOf = Buffer.of("rank", List.of(mm), DType.INT64);
        Buffer u = Buffer.of("u", List.of(1), DType.INT64), hit = Buffer.of("hit", List.of(1), DType.INT64), order = Buffer.of("order", List.of(1), DType.INT64);
        var k = dev.relayfarm.kernel.expr.Var.index("k");
        var q = dev.relayfarm.kernel.expr.Var.index("q");
        var e = dev.relayfarm.kernel.expr.Var.index("e");
        // element e (0 <= e < sliceLength) of slice j, as a flat index of x
        java.util.function.BiFunction<PrimExpr, PrimExpr, PrimExpr> element = flat ? (j, ee) -> j
                : (j, ee) -> ee.div(inner).mul(m).add(j).mul(inner).add(ee.mod(inner));
        // order := sign of (slice j1 - slice j2), lexicographically over the slices' elements (0 when equal)
        java.util.function.BiFunction<PrimExpr, PrimExpr, Stmt> compare = (j1, j2) -> {
            PrimExpr p = num(at(x, element.apply(j1, e))), r = num(at(x, element.apply(j2, e)));
            // as Java's Double.compare (the interpreter's): NaN equals NaN and sorts after every number
            PrimExpr less = p.lt(r), greater = p.gt(r);
            if (p.dtype().isFloat()) {
                PrimExpr pNaN = p.ne(p), rNaN = r.ne(r);
                less = less.or(rNaN.and(pNaN.eq(new dev.relayfarm.kernel.expr.IntImm(0, DType.BOOL))));
                greater = greater.or(pNaN.and(rNaN.eq(new dev.relayfarm.kernel.expr.IntImm(0, DType.BOOL))));
            }
            Stmt decide = IfThenElse.of(get(order).eq(PrimExpr.of(0)), Seq.of(List.of(
                    IfThenElse.of(less, set(order, PrimExpr.of(-1))),
                    IfThenElse.of(greater, set(order, PrimExpr.of(1))))));
            return Seq.of(List.of(set(order, PrimExpr.of(0)), loop(e, PrimExpr.of(sliceLength), decide)));
        };
        Stmt findUniques = Seq.of(List.of(
                set(u, PrimExpr.of(0)),
                loop(k, PrimExpr.of(m), Seq.of(List.of(
                        set(hit, PrimExpr.of(-1)),
                        loop(q, get(u), IfThenElse.of(get(hit).lt(0), Seq.of(List.of(
                                compare.apply(k, at(ids, q)),
                                IfThenElse.of(get(order).eq(PrimExpr.of(0)), set(hit, q)))))),
                        new IfThenElse(get(hit).lt(0),
                                Seq.of(List.of(put(ids, get(u), k), put(seen, get(u), PrimExpr.of(1)), put(of, k, get(u)), set(u, get(u).add(1)))),
                                Optional.of(Seq.of(List.of(put(of, k, get(hit)), put(seen, get(hit), at(seen, get(hit)).add(1)))))))))));
        var v = dev.relayfarm.kernel.expr.Var.index("v");
        Stmt rank1 = a.sorted()
                ? loop(k, get(u), Seq.of(List.of(
                        put(rankOf, k, PrimExpr.of(0)),
                        loop(v, get(u), Seq.of(List.of(
                                compare.apply(at(ids, v), at(ids, k)),
                                IfThenElse.of(get(order).lt(0), put(rankOf, k, at(rankOf, k).add(1)))))))))
                : loop(k, get(u), put(rankOf, k, k));
        PrimExpr r = at(rankOf, k);
        // values along the axis have U slices: element e of unique r sits at (outer index, r, inner index) of a [.., U, ..] tensor
        PrimExpr valueAt = flat ? r : e.div(inner).mul(get(u)).add(r).mul(inner).add(e.mod(inner));
        Stmt write = Seq.of(List.of(
                loop(k, get(u), Seq.of(List.of(
                        put(first, r, at(ids, k)),
                        put(counts, r, at(seen, k)),
                        loop(e, PrimExpr.of(sliceLength), put(values, valueAt, at(x, element.apply(at(ids, k), e))))))),
                loop(k, PrimExpr.of(m), put(inverse, k, at(rankOf, at(of, k))))));
        List<Stmt> shapes = new ArrayList<>();
        for (int d = 0; d < rank; d++) shapes.add(put(valuesShape, PrimExpr.of(d), flat || d == axis ? get(u) : PrimExpr.of(s[d])));
        shapes.add(set(firstShape, get(u)));
        shapes.add(set(inverseShape, PrimExpr.of(m)));
        shapes.add(set(countsShape, get(u)));
        Stmt body = Seq.of(List.of(findUniques, rank1, write, Seq.of(shapes)));
        body = local(u, local(hit, local(order, body)));
        for (Buffer scratch : List.of(ids, of, seen, rankOf)) body = new Allocate(scratch, Scope.GLOBAL, body);
        List<Buffer> params = List.of(x, values, first, inverse, counts, valuesShape, firstShape, inverseShape, countsShape);
        List<TensorType> outs = new ArrayList<>(bounds);
        for (Buffer b : params.subList(5, 9)) outs.add(TensorType.of(DType.INT64, b.shape().getFirst()));
        return kernel(name, params, 1, body, specs(params, List.of(xt), outs, -1), "unique");
    }

    /**
     * ONNX NonMaxSuppression: per batch and class, the boxes scoring above the threshold in score order (ties: lower
     * index first) are kept unless one already kept overlaps them by more than the IoU threshold, at most
     * max_output_boxes_per_class of them; the rows (batch, class, box), then the shape {@code [rows, 3]}. Boxes and
     * IoUs are computed in double, as the interpreter does.
     */
    private static LoweredKernel nms(String name, NonMaxSuppression.NmsAttrs a, List<TensorType> in, List<Buffer> inputs, TensorType bound) {
        long[] bs = longs(in.get(0)), ss = longs(in.get(1));
        long batches = bs[0], n = bs[1], classes = ss[1];
        if (bs[2] != 4 || ss[0] != batches || ss[2] != n) {
            throw new UnsupportedOperationException("vision.onnx_non_max_suppression: scores " + in.get(1) + " do not match boxes " + in.get(0));
        }
        Buffer boxes = inputs.get(0), scores = inputs.get(1);
        Buffer out = Buffer.of("selected", List.of(Math.toIntExact(elements(bound))), DType.INT64), shape = Buffer.of("shape", List.of(2), DType.INT64);
        Buffer order = Buffer.of("order", List.of(Math.toIntExact(n)), DType.INT64), kept = Buffer.of("kept", List.of(Math.toIntExact(n)), DType.INT64);
        Buffer total = Buffer.of("total", List.of(1), DType.INT64), candidates = Buffer.of("candidates", List.of(1), DType.INT64);
        Buffer keptCount = Buffer.of("kept_count", List.of(1), DType.INT64), place = Buffer.of("place", List.of(1), DType.INT64);
        Buffer suppressed = Buffer.of("suppressed", List.of(1), DType.INT64);
        PrimExpr maxOut = i64(get(inputs.get(2)));
        PrimExpr iouThreshold = f64(get(inputs.get(3))), scoreThreshold = f64(get(inputs.get(4)));
        var b = dev.relayfarm.kernel.expr.Var.index("b");
        var c = dev.relayfarm.kernel.expr.Var.index("c");
        var i = dev.relayfarm.kernel.expr.Var.index("i");
        var j = dev.relayfarm.kernel.expr.Var.index("j");
        var t = dev.relayfarm.kernel.expr.Var.index("t");
        PrimExpr base = b.mul(classes).add(c).mul(n);
        java.util.function.Function<PrimExpr, PrimExpr> score = box -> f64(at(scores, base.add(box)));
        // j comes before i in the visiting order
        PrimExpr before = score.apply(j).gt(scoreThreshold)
                .and(score.apply(j).gt(score.apply(i)).or(score.apply(j).eq(score.apply(i)).and(j.lt(i))));
        Stmt sort = Seq.of(List.of(
                set(candidates, PrimExpr.of(0)),
                loop(i, PrimExpr.of(n), IfThenElse.of(score.apply(i).gt(scoreThreshold), Seq.of(List.of(
                        set(place, PrimExpr.of(0)),
                        loop(j, PrimExpr.of(n), IfThenElse.of(before, set(place, get(place).add(1)))),
                        put(order, get(place), i),
                        set(candidates, get(candidates).add(1))))))));
        PrimExpr box = at(order, t);
        Stmt keep = Seq.of(List.of(
                put(kept, get(keptCount), box),
                put(out, get(total).mul(3), b),
                put(out, get(total).mul(3).add(1), c),
                put(out, get(total).mul(3).add(2), box),
                set(total, get(total).add(1)),
                set(keptCount, get(keptCount).add(1))));
        Stmt select = Seq.of(List.of(
                set(keptCount, PrimExpr.of(0)),
                loop(t, get(candidates), IfThenElse.of(get(keptCount).lt(maxOut), Seq.of(List.of(
                        set(suppressed, PrimExpr.of(0)),
                        loop(j, get(keptCount), IfThenElse.of(iou(boxes, b, n, box, at(kept, j), a.centerPointBox() == 1).gt(iouThreshold),
                                set(suppressed, PrimExpr.of(1)))),
                        IfThenElse.of(get(suppressed).eq(PrimExpr.of(0)), keep)))))));
        Stmt body = Seq.of(List.of(
                set(total, PrimExpr.of(0)),
                loop(b, PrimExpr.of(batches), loop(c, PrimExpr.of(classes), Seq.of(List.of(sort, select)))),
                put(shape, PrimExpr.of(0), get(total)),
                put(shape, PrimExpr.of(1), PrimExpr.of(3))));
        for (Buffer l : List.of(total, candidates, keptCount, place, suppressed)) body = local(l, body);
        body = new Allocate(order, Scope.GLOBAL, new Allocate(kept, Scope.GLOBAL, body));
        List<Buffer> params = new ArrayList<>(inputs);
        params.add(out);
        params.add(shape);
        return kernel(name, params, inputs.size(), body, specs(params, in, List.of(bound, TensorType.of(DType.INT64, 2)), -1), "non_max_suppression");
    }

    /** IoU of boxes p and q of batch b (0 when either has no area), in double. */
    private static PrimExpr iou(Buffer boxes, PrimExpr b, long n, PrimExpr p, PrimExpr q, boolean center) {
        PrimExpr[] bp = corners(boxes, b, n, p, center), bq = corners(boxes, b, n, q, center);
        PrimExpr zero = new FloatImm(0, DType.FLOAT64);
        PrimExpr areaP = bp[2].sub(bp[0]).mul(bp[3].sub(bp[1])), areaQ = bq[2].sub(bq[0]).mul(bq[3].sub(bq[1]));
        PrimExpr h = bp[2].min(bq[2]).sub(bp[0].max(bq[0])).max(zero), w = bp[3].min(bq[3]).sub(bp[1].max(bq[1])).max(zero);
        PrimExpr inter = h.mul(w);
        return new Select(areaP.le(zero).or(areaQ.le(zero)), zero, inter.div(areaP.add(areaQ).sub(inter)));
    }

    /** [ymin, xmin, ymax, xmax] of box {@code box} of batch {@code b}, as the interpreter reads either box format. */
    private static PrimExpr[] corners(Buffer boxes, PrimExpr b, long n, PrimExpr box, boolean center) {
        PrimExpr off = b.mul(n).add(box).mul(4);
        PrimExpr v0 = f64(at(boxes, off)), v1 = f64(at(boxes, off.add(1))), v2 = f64(at(boxes, off.add(2))), v3 = f64(at(boxes, off.add(3)));
        if (center) { // [x_center, y_center, width, height]
            PrimExpr half = new FloatImm(2, DType.FLOAT64);
            return new PrimExpr[] {v1.sub(v3.div(half)), v0.sub(v2.div(half)), v1.add(v3.div(half)), v0.add(v2.div(half))};
        }
        return new PrimExpr[] {v0.min(v2), v1.min(v3), v0.max(v2), v1.max(v3)};
    }

    // ---------------------------------------------------------------- helpers

    private static LoweredKernel kernel(String name, List<Buffer> params, int inputs, Stmt body, List<TensorSpec> specs, String workload) {
        return new LoweredKernel(new LoweredFunc(name, params, inputs, body), new KernelSignature(name, specs, inputs), workload, CONFIG);
    }

    /** The signature's specs: the inputs' and results' own shapes (the buffers are flat); {@code dynamicResult} >= 0 marks that result's leading dimension dynamic. */
    private static List<TensorSpec> specs(List<Buffer> params, List<TensorType> in, List<TensorType> out, int dynamicResult) {
        List<TensorSpec> specs = new ArrayList<>();
        for (int k = 0; k < params.size(); k++) {
            TensorType t = k < in.size() ? in.get(k) : out.get(k - in.size());
            List<Integer> shape = new ArrayList<>();
            for (long d : t.staticShape()) shape.add(Math.toIntExact(d));
            if (dynamicResult >= 0 && k - in.size() == dynamicResult) shape.set(0, TensorSpec.DYNAMIC);
            specs.add(new TensorSpec(params.get(k).name(), shape, t.dtype()));
        }
        return specs;
    }

    private static long[] longs(TensorType t) {
        return java.util.Arrays.stream(t.staticShape()).asLongStream().toArray();
    }

    private static long elements(TensorType t) {
        long n = 1;
        for (long d : t.staticShape()) n *= d;
        return n;
    }

    private static int axis(Unique.UniqueAttrs a, TensorType x) {
        int axis = Math.toIntExact(a.axis());
        return axis < 0 ? axis + x.rank() : axis;
    }

    private static PrimExpr get(Buffer b) {
        return new Load(b, List.of(PrimExpr.of(0)));
    }

    private static PrimExpr at(Buffer b, PrimExpr i) {
        return new Load(b, List.of(i));
    }

    private static Stmt set(Buffer b, PrimExpr v) {
        return put(b, PrimExpr.of(0), v);
    }

    private static Stmt put(Buffer b, PrimExpr i, PrimExpr v) {
        return new Store(b, List.of(i), v.dtype().equals(b.dtype()) ? v : new Cast(b.dtype(), v));
    }

    private static Stmt loop(dev.relayfarm.kernel.expr.Var v, PrimExpr extent, Stmt body) {
        return new For(v, PrimExpr.of(0), extent, ForKind.SERIAL, body);
    }

    private static Stmt local(Buffer b, Stmt body) {
        return new Allocate(b, Scope.LOCAL, body);
    }

    private static PrimExpr f64(PrimExpr v) {
        return v.dtype().equals(DType.FLOAT64) ? v : new Cast(DType.FLOAT64, v);
    }

    private static PrimExpr i64(PrimExpr v) {
        return v.dtype().equals(DType.INT64) ? v : new Cast(DType.INT64, v);
    }

    /** An element as a comparable number: floats as double, integers and bools as int64. */
    private static PrimExpr num(PrimExpr v) {
        return v.dtype().isFloat() ? f64(v) : i64(v);
    }

    private static PrimExpr nonZero(PrimExpr v) {
        return v.dtype().isFloat() ? f64(v).ne(new FloatImm(0, DType.FLOAT64)) : i64(v).ne(PrimExpr.of(0));
    }

    private static PrimExpr call(MathFn fn, PrimExpr v) {
        return new dev.relayfarm.kernel.expr.Call(fn, List.of(v));
    }
}
