package dev.relayfarm.ops.nn;

/** A shape seen as {@code [outer, mid, inner]} around one axis: the indexing of axis-wise kernels. */
public record AxisSplit(int outer, int mid, int inner, int axis) {
    public static AxisSplit of(int[] shape, int axis, String op) {
        int rank = shape.length;
        if (axis < -rank || axis >= rank) {
            throw new IllegalArgumentException(op + ": axis must be in [" + -rank + ", " + (rank - 1) + "], got " + axis);
        }
        int ax = axis < 0 ? axis + rank : axis;
        int outer = 1, inner = 1;
        for (int i = 0; i < ax; i++) outer *= shape[i];
        for (int i = ax + 1; i < rank; i++) inner *= shape[i];
        return new AxisSplit(outer, shape[ax], inner, ax);
    }
}
