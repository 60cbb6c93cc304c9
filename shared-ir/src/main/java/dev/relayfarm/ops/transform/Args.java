package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.RelationException;
import java.util.ArrayList;
import java.util.List;

/**
 * What the transform relations share: reading a tensor (or tuple-of-tensors) argument, where
 * {@code null} means "not known yet, defer", normalizing axes, and printing shapes the way error
 * messages quote them, {@code (2, n, ?)}.
 */
final class Args {
    private Args() {}

    /** Argument {@code i} as a tensor type; null while it is still incomplete (the relation defers). */
    static TensorType tensor(String op, List<Type> types, int i, String name) {
        Type t = types.get(i);
        if (t instanceof TensorType tt) return tt;
        if (t instanceof IncompleteType) return null;
        throw new RelationException(op + ": " + name + " must be a tensor, got " + t);
    }

    /** Argument {@code i} as a tuple of tensors; null while the tuple or any field is incomplete. */
    static List<TensorType> tensors(String op, List<Type> types, int i, String name) {
        Type t = types.get(i);
        if (t instanceof IncompleteType) return null;
        if (!(t instanceof TupleType tuple)) {
            throw new RelationException(op + ": " + name + " must be a tuple of tensors, got " + t);
        }
        List<TensorType> out = new ArrayList<>();
        for (int k = 0; k < tuple.fields().size(); k++) {
            Type f = tuple.fields().get(k);
            if (f instanceof IncompleteType) return null;
            if (!(f instanceof TensorType tt)) {
                throw new RelationException(op + ": field " + k + " of " + name + " must be a tensor, got " + f);
            }
            out.add(tt);
        }
        return out;
    }

    /** A rank-0 tensor argument; null while incomplete. */
    static TensorType scalar(String op, List<Type> types, int i, String name) {
        TensorType t = tensor(op, types, i, name);
        if (t != null && !t.isScalar()) {
            throw new RelationException(op + ": " + name + " must be a scalar, got " + t);
        }
        return t;
    }

    /** An integer-typed tensor argument (indices); null while incomplete. */
    static TensorType indices(String op, List<Type> types, int i, String name) {
        TensorType t = tensor(op, types, i, name);
        if (t != null && !t.dtype().isInteger()) {
            throw new RelationException(op + ": " + name + " must have an integer dtype, got " + t.dtype());
        }
        return t;
    }

    /**
     * {@code axis} counted from the end when negative, checked against {@code rank} positions
     * ({@code rank} is the input rank, or one more where the axis names a new dimension).
     */
    static int axis(String op, long axis, int rank) {
        if (axis < -rank || axis >= rank) {
            throw new RelationException(op + ": axis " + axis + " is out of range for rank " + rank
                    + " (must be in [" + (-rank) + ", " + (rank - 1) + "])");
        }
        return (int) (axis < 0 ? axis + rank : axis);
    }

    static String show(List<Dim> shape) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < shape.size(); i++) {
            if (i > 0) sb.append(", ");
            sb.append(shape.get(i));
        }
        return sb.append(')').toString();
    }

    static String show(int[] shape) {
        return show(dims(shape));
    }

    static String showLongs(List<Long> values) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) sb.append(", ");
            sb.append(values.get(i));
        }
        return sb.append(')').toString();
    }

    static List<Dim> dims(int[] shape) {
        List<Dim> out = new ArrayList<>(shape.length);
        for (int d : shape) out.add(Dim.of(d));
        return out;
    }

    /** A static shape back to ints (kernels apply the shape rules of the relation to real shapes). */
    static int[] ints(List<Dim> shape) {
        int[] out = new int[shape.size()];
        for (int i = 0; i < out.length; i++) out[i] = Math.toIntExact(shape.get(i).value());
        return out;
    }

    static List<Long> boxed(long[] values) {
        if (values == null) return null;
        List<Long> out = new ArrayList<>(values.length);
        for (long v : values) out.add(v);
        return List.copyOf(out);
    }
}
