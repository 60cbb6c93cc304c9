package dev.relayfarm.kernel.te;

import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.expr.Combiner;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.IterVar;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.Var;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Builders of the tensor-expression layer, the way TVM's {@code te} reads:
 * <pre>
 * Tensor a = Te.placeholder("A", List.of(m, k), DType.FLOAT32);
 * IterVar r = Te.reduceAxis("k", k);
 * Tensor c = Te.compute("C", List.of(m, n), i -> Te.sum(a.at(i.get(0), r.var()).mul(b.at(i.get(1), r.var())), r));
 * </pre>
 * Data-parallel axes are named {@code i, j, k, l, ...} unless names are given.
 */
public final class Te {
    private static final AtomicLong NEXT = new AtomicLong();
    private static final String[] AXIS_NAMES = {"i", "j", "k", "l", "m", "n"};

    private Te() {}

    public static Placeholder placeholder(String name, List<Integer> shape, DType dtype) {
        return new Placeholder(name, shape, dtype, NEXT.incrementAndGet());
    }

    public static Compute compute(String name, List<Integer> shape, Function<List<Var>, PrimExpr> body) {
        List<String> names = new ArrayList<>();
        for (int d = 0; d < shape.size(); d++) names.add(d < AXIS_NAMES.length ? AXIS_NAMES[d] : "ax" + d);
        return compute(name, shape, names, body);
    }

    public static Compute compute(String name, List<Integer> shape, List<String> axisNames, Function<List<Var>, PrimExpr> body) {
        if (axisNames.size() != shape.size()) throw new IllegalArgumentException("compute " + name + ": " + shape.size() + " axes but " + axisNames.size() + " names");
        List<IterVar> axes = new ArrayList<>();
        for (int d = 0; d < shape.size(); d++) axes.add(new IterVar(Var.index(axisNames.get(d)), shape.get(d), IterVar.Kind.DATA_PAR));
        PrimExpr b = body.apply(axes.stream().map(IterVar::var).toList());
        return new Compute(name, axes, b, NEXT.incrementAndGet());
    }

    public static IterVar reduceAxis(String name, int extent) {
        return IterVar.reduce(name, extent);
    }

    public static Reduce sum(PrimExpr source, IterVar... axes) {
        return new Reduce(Combiner.SUM, source, Arrays.asList(axes), zero(source.dtype()));
    }

    public static Reduce max(PrimExpr source, IterVar... axes) {
        return new Reduce(Combiner.MAX, source, Arrays.asList(axes), lowest(source.dtype()));
    }

    public static Reduce min(PrimExpr source, IterVar... axes) {
        return new Reduce(Combiner.MIN, source, Arrays.asList(axes), highest(source.dtype()));
    }

    public static PrimExpr zero(DType dt) {
        return constant(dt, 0);
    }

    public static PrimExpr constant(DType dt, double v) {
        return dt.isFloat() ? new FloatImm(v, dt) : new IntImm((long) v, dt);
    }

    private static PrimExpr lowest(DType dt) {
        return dt.isFloat() ? new FloatImm(Double.NEGATIVE_INFINITY, dt) : new IntImm(dt.bits() == 64 ? Long.MIN_VALUE : -(1L << (dt.bits() - 1)), dt);
    }

    private static PrimExpr highest(DType dt) {
        return dt.isFloat() ? new FloatImm(Double.POSITIVE_INFINITY, dt) : new IntImm(dt.bits() == 64 ? Long.MAX_VALUE : (1L << (dt.bits() - 1)) - 1, dt);
    }
}
