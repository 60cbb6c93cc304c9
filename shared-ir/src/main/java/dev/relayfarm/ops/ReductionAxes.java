package dev.relayfarm.ops;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ops.RelationException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The axis selection every reduction shares (Relay's GetReduceAxes and ReduceShapeImpl): which axes
 * to reduce, and the shape left after reducing them.
 */
public interface ReductionAxes {
    /** The listed axes (may be negative), or null for None. */
    List<Integer> axis();

    boolean keepdims();

    boolean exclude();

    /** Reads the optional {@code axis} attribute: None, one integer, or a list of integers. */
    static List<Integer> readAxis(AttrReader r) {
        int[] axis = r.optionalInts("axis");
        return axis == null ? null : Arrays.stream(axis).boxed().toList();
    }

    /**
     * The reduced axes of a rank-{@code rank} input, sorted and non-negative. None or an empty list
     * reduces every axis (as in Relay, with or without {@code exclude}).
     */
    default int[] reducedAxes(String op, int rank) {
        List<Integer> listed = axis();
        if (listed == null || listed.isEmpty()) {
            int[] all = new int[rank];
            for (int i = 0; i < rank; i++) all[i] = i;
            return all;
        }
        boolean[] picked = new boolean[rank];
        for (int a : listed) {
            if (a < -rank || a >= rank) {
                throw new RelationException(op + ": axis " + a + " is out of range for rank " + rank
                        + " (must be in [" + (-rank) + ", " + (rank - 1) + "])");
            }
            int n = a < 0 ? a + rank : a;
            if (picked[n]) throw new RelationException(op + ": axis " + n + " is listed twice in " + listed);
            picked[n] = true;
        }
        int[] out = new int[rank];
        int k = 0;
        for (int i = 0; i < rank; i++) if (picked[i] != exclude()) out[k++] = i;
        return Arrays.copyOf(out, k);
    }

    /** {@code shape} with the reduced axes dropped, or kept as 1 with {@code keepdims}. */
    default List<Dim> reducedShape(List<Dim> shape, int[] axes) {
        boolean[] reduced = new boolean[shape.size()];
        for (int a : axes) reduced[a] = true;
        List<Dim> out = new ArrayList<>();
        for (int i = 0; i < shape.size(); i++) {
            if (!reduced[i]) out.add(shape.get(i));
            else if (keepdims()) out.add(Dim.of(1));
        }
        return out;
    }
}
