package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.TypeFormat;
import dev.relayfarm.ops.RelationException;
import java.util.List;

/** Small helpers shared by the nn type relations: tensor checks, axis normalization, shape text. */
public final class Rel {
    private Rel() {}

    /** The tensor type of {@code t}, or null while it is still unknown (the relation then defers). */
    public static TensorType tensor(String op, String what, Type t) {
        return switch (t) {
            case TensorType tt -> tt;
            case IncompleteType i -> null;
            default -> throw new RelationException(op + ": " + what + " must be a tensor, got " + TypeFormat.format(t));
        };
    }

    public static TensorType tensorOfRank(String op, String what, Type t, int rank) {
        TensorType tt = tensor(op, what, t);
        if (tt != null && tt.rank() != rank) {
            throw new RelationException(op + ": " + what + " must have rank " + rank + ", got " + TypeFormat.format(tt));
        }
        return tt;
    }

    /** Normalizes a possibly negative axis; the message states the valid range and the value. */
    public static int axis(String op, int axis, int rank) {
        if (axis < -rank || axis >= rank) {
            throw new RelationException(op + ": axis must be in [" + -rank + ", " + (rank - 1) + "], got " + axis);
        }
        return axis < 0 ? axis + rank : axis;
    }

    /** {@code (16, 4, 3, 3)}: a shape as TVM prints it. */
    public static String shape(List<Dim> dims) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < dims.size(); i++) {
            if (i > 0) sb.append(", ");
            sb.append(dims.get(i));
        }
        return sb.append(")").toString();
    }

    /** True only when both dims are known integers that differ; symbolic and Any dims are checked at run time. */
    public static boolean surelyDiffer(Dim a, Dim b) {
        return a instanceof Dim.Int(long x) && b instanceof Dim.Int(long y) && x != y;
    }

    /** Pads of 1, 2 or 4 values as TVM's get_pad_tuple2d: returns {top, left, bottom, right}. */
    public static int[] pad4(String op, String key, int[] p) {
        return switch (p.length) {
            case 1 -> new int[] {p[0], p[0], p[0], p[0]};
            case 2 -> new int[] {p[0], p[1], p[0], p[1]};
            case 4 -> p.clone();
            default -> throw new RelationException(op + ": attribute '" + key + "' must have 1, 2 or 4 values, got " + p.length);
        };
    }

    /** A 2-vector attribute (strides, dilation, pool size); a single value applies to both axes. */
    public static int[] pair(String op, String key, int[] p) {
        return switch (p.length) {
            case 1 -> new int[] {p[0], p[0]};
            case 2 -> p.clone();
            default -> throw new RelationException(op + ": attribute '" + key + "' must have 2 values, got " + p.length);
        };
    }

    /** A 3-vector attribute (3-D strides, dilation, pool size); a single value applies to all three axes. */
    public static int[] triple(String op, String key, int[] p) {
        return switch (p.length) {
            case 1 -> new int[] {p[0], p[0], p[0]};
            case 3 -> p.clone();
            default -> throw new RelationException(op + ": attribute '" + key + "' must have 3 values, got " + p.length);
        };
    }

    /** Pads of 1, 3 or 6 values as TVM's get_pad_tuple3d: returns {front, top, left, back, bottom, right}. */
    public static int[] pad6(String op, String key, int[] p) {
        return switch (p.length) {
            case 1 -> new int[] {p[0], p[0], p[0], p[0], p[0], p[0]};
            case 3 -> new int[] {p[0], p[1], p[2], p[0], p[1], p[2]};
            case 6 -> p.clone();
            default -> throw new RelationException(op + ": attribute '" + key + "' must have 1, 3 or 6 values, got " + p.length);
        };
    }

    public static void positive(String op, String key, int[] values) {
        for (int v : values) {
            if (v <= 0) throw new RelationException(op + ": attribute '" + key + "' must be positive, got " + java.util.Arrays.toString(values));
        }
    }

    public static void nonNegative(String op, String key, int[] values) {
        for (int v : values) {
            if (v < 0) throw new RelationException(op + ": attribute '" + key + "' must be non-negative, got " + java.util.Arrays.toString(values));
        }
    }
}
