package dev.relayfarm.ad;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Builders the gradient rules share: operator calls, typed scalar constants, and the reduction of a broadcast adjoint. */
public final class Grads {
    private Grads() {}

    public static Call call(String op, Expr... args) {
        return new Call(Op.get(op), List.of(args));
    }

    public static Call call(String op, Attrs attrs, Expr... args) {
        return new Call(Op.get(op), List.of(args), attrs);
    }

    /** Attributes from alternating names and values (Long/Integer, Double, String, Boolean, long[]/int[] lists). */
    public static Attrs attrs(Object... nameValues) {
        Map<String, AttrValue> m = new LinkedHashMap<>();
        for (int i = 0; i < nameValues.length; i += 2) {
            m.put((String) nameValues[i], attrValue(nameValues[i + 1]));
        }
        return new Attrs(m);
    }

    private static AttrValue attrValue(Object v) {
        return switch (v) {
            case AttrValue a -> a;
            case Integer i -> AttrValue.of((long) i);
            case Long l -> AttrValue.of((long) l);
            case Double d -> AttrValue.of((double) d);
            case String s -> AttrValue.of(s);
            case Boolean b -> AttrValue.of((boolean) b);
            case long[] ls -> AttrValue.ints(ls);
            case int[] is -> AttrValue.ints(java.util.Arrays.stream(is).asLongStream().toArray());
            case List<?> list -> new AttrValue.ListValue(list.stream().map(Grads::attrValue).toList());
            default -> throw new IllegalArgumentException("not an attribute value: " + v);
        };
    }

    /** A rank-0 constant of {@code dtype}. */
    public static Constant scalar(double value, DType dtype) {
        return new Constant(NDArray.fromDoubles(dtype, new int[0], new double[] {value}));
    }

    /** The static extent of each dimension; a dynamic one is an error naming the operator. */
    public static long[] staticShape(TensorType t, String op) {
        long[] dims = new long[t.rank()];
        for (int i = 0; i < dims.length; i++) {
            if (!(t.shape().get(i) instanceof Dim.Int c)) {
                throw new GradientException(op + ": the gradient needs static shapes, got " + t);
            }
            dims[i] = c.value();
        }
        return dims;
    }

    /**
     * The adjoint {@code g} (of the broadcast result's type {@code from}) summed back to an input of type {@code to}
     * (TVM's {@code collapse_sum_like}): over the leading dimensions {@code to} lacks and the ones it has as 1.
     * Shapes are static here, so the axes are computed now and the result is a plain {@code sum} + {@code reshape}.
     */
    public static Expr collapseTo(Expr g, TensorType from, TensorType to, String op) {
        long[] f = staticShape(from, op);
        long[] t = staticShape(to, op);
        if (java.util.Arrays.equals(f, t)) return g;
        int lead = f.length - t.length;
        List<Long> axes = new ArrayList<>();
        for (int i = 0; i < f.length; i++) {
            if (i < lead || (t[i - lead] == 1 && f[i] != 1)) axes.add((long) i);
        }
        Expr summed = axes.isEmpty() ? g : call("sum", attrs("axis", axes.stream().mapToLong(Long::longValue).toArray(), "keepdims", true), g);
        return call("reshape", attrs("newshape", t), summed);
    }

    /** The number of elements of a statically shaped tensor. */
    public static long staticShapeProduct(TensorType t, String op) {
        long n = 1;
        for (long d : staticShape(t, op)) n *= d;
        return n;
    }

    /** {@code g} broadcast to a static shape (the adjoint of a reduction or of a broadcasting input). */
    public static Expr broadcastTo(Expr g, TensorType to, String op) {
        return call("broadcast_to", attrs("shape", staticShape(to, op)), g);
    }
}
