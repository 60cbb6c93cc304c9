package dev.relayfarm.ops;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ops.RelationException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Numpy broadcasting of two shapes, as Relay's {@code BroadcastRel} does it: shapes align on the
 * right, a missing leading dimension counts as 1, and per dimension
 * <pre>
 *   d  with d  → d      (equal: static, or provably equal symbolic, {@code n} with {@code n})
 *   1  with d  → d      (also {@code 1} with {@code n} → {@code n})
 *   ?  with 1  → ?      (the run-time size may be anything)
 *   ?  with d  → d      (d ≠ 1: the run-time size must be d or 1, the result is d either way)
 *   ?  with ?  → ?
 *   2  with 4  → error, and also {@code n} with {@code m} or {@code n} with {@code 4}: Relay does not
 *                assume an unknown symbol equals 1 or another size.
 * </pre>
 * The static-shape version below is what kernels use once sizes are known.
 */
public final class Broadcast {
    private Broadcast() {}

    /** The broadcast of two symbolic shapes; throws a {@link RelationException} naming {@code op} and the dimension. */
    public static List<Dim> shape(String op, List<Dim> a, List<Dim> b) {
        int rank = Math.max(a.size(), b.size());
        List<Dim> out = new ArrayList<>(rank);
        for (int i = 0; i < rank; i++) {
            int ia = i - (rank - a.size());
            int ib = i - (rank - b.size());
            Dim da = ia >= 0 ? a.get(ia) : Dim.of(1);
            Dim db = ib >= 0 ? b.get(ib) : Dim.of(1);
            Dim d = dim(da, db);
            if (d == null) {
                throw new RelationException(op + ": shapes " + format(a) + " and " + format(b)
                        + " are not broadcast-compatible at dim " + i + " (" + da + " vs " + db + ")");
            }
            out.add(d);
        }
        return out;
    }

    /** The broadcast of one pair of aligned dimensions, or null when they are incompatible. */
    public static Dim dim(Dim a, Dim b) {
        boolean anyA = a instanceof Dim.Any;
        boolean anyB = b instanceof Dim.Any;
        if (anyA && anyB) return Dim.ANY;
        if (anyA) return isOne(b) ? Dim.ANY : b;
        if (anyB) return isOne(a) ? Dim.ANY : a;
        if (Dims.provablyEqual(a, b)) return a;
        if (isOne(a)) return b;
        if (isOne(b)) return a;
        return null;
    }

    private static boolean isOne(Dim d) {
        return d instanceof Dim.Int(long v) && v == 1;
    }

    /** The broadcast of static shapes (kernels); throws IllegalArgumentException in the same words as {@link #shape}. */
    public static int[] shape(String op, int[] a, int[] b) {
        int rank = Math.max(a.length, b.length);
        int[] out = new int[rank];
        for (int i = 0; i < rank; i++) {
            int ia = i - (rank - a.length);
            int ib = i - (rank - b.length);
            int da = ia >= 0 ? a[ia] : 1;
            int db = ib >= 0 ? b[ib] : 1;
            if (da != db && da != 1 && db != 1) {
                throw new IllegalArgumentException(op + ": shapes " + format(a) + " and " + format(b)
                        + " are not broadcast-compatible at dim " + i + " (" + da + " vs " + db + ")");
            }
            out[i] = da == 1 ? db : da;
        }
        return out;
    }

    /** TVM's tuple-like shape spelling: {@code (2, 3)}, {@code (3)}, {@code ()}. */
    public static String format(List<Dim> shape) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < shape.size(); i++) {
            if (i > 0) sb.append(", ");
            sb.append(shape.get(i));
        }
        return sb.append(')').toString();
    }

    public static String format(int[] shape) {
        return format(Arrays.stream(shape).mapToObj(Dim::of).toList());
    }
}
