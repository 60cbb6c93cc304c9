package dev.relayfarm.ops;

/**
 * The one loop nest behind every broadcasting kernel (binary ops, {@code where}) and every reduction:
 * walks an output shape in row-major order and tells a {@link Row} body, row by row, where each
 * operand's matching element lives. The body is a tight loop over primitive arrays; this class only
 * moves offsets, so the per-element work never goes through an index computation or a box.
 *
 * <p>An operand whose shape broadcasts to the output advances by its own row-major stride on
 * dimensions it has and by 0 on dimensions it lacks or holds as 1. Two shortcuts cover most calls:
 * when every operand either has the output's element count or a single element, the whole output
 * is one row (stride 1 or 0), which is the same-shape and the scalar-operand case.
 *
 * <p>Reductions reuse it the other way round: the walked shape is the input, the "operand" is the
 * keepdims-shaped accumulator, whose reduced axes have stride 0.
 */
final class BroadcastLoop {
    private BroadcastLoop() {}

    /** The body for one row: elements {@code out .. out+n-1}; operand {@code i} starts at {@code offsets[i]} and moves by {@code strides[i]} (0 or 1). Must not modify the arrays. */
    @FunctionalInterface
    interface Row {
        void run(int n, int out, int[] offsets, int[] strides);
    }

    /** Walks {@code outShape}; each of {@code operands} must broadcast to it (checked by the caller). */
    static void walk(int[] outShape, int[][] operands, Row row) {
        int total = 1;
        for (int d : outShape) total *= d;
        if (total == 0) return;
        int k = operands.length;
        int[] strides = new int[k];
        boolean flat = true;
        for (int i = 0; i < k; i++) {
            int size = 1;
            for (int d : operands[i]) size *= d;
            if (size == total) strides[i] = 1;
            else if (size == 1) strides[i] = 0;
            else flat = false;
        }
        if (flat) {
            row.run(total, 0, new int[k], strides);
            return;
        }
        int rank = outShape.length;
        int[][] dimStrides = new int[k][];
        for (int i = 0; i < k; i++) dimStrides[i] = alignedStrides(outShape, operands[i]);
        int inner = outShape[rank - 1];
        for (int i = 0; i < k; i++) strides[i] = dimStrides[i][rank - 1];
        int[] index = new int[rank];
        int[] offsets = new int[k];
        for (int out = 0; out < total; out += inner) {
            row.run(inner, out, offsets, strides);
            // Odometer over all dimensions but the innermost, keeping each operand's offset in step.
            for (int d = rank - 2; d >= 0; d--) {
                index[d]++;
                for (int i = 0; i < k; i++) offsets[i] += dimStrides[i][d];
                if (index[d] < outShape[d]) break;
                for (int i = 0; i < k; i++) offsets[i] -= dimStrides[i][d] * outShape[d];
                index[d] = 0;
            }
        }
    }

    /** Per output dimension, the operand's row-major stride, or 0 where the operand broadcasts. */
    private static int[] alignedStrides(int[] outShape, int[] shape) {
        int rank = outShape.length;
        int[] s = new int[rank];
        int stride = 1;
        for (int d = shape.length - 1; d >= 0; d--) {
            int od = d + (rank - shape.length);
            s[od] = shape[d] == 1 && outShape[od] != 1 ? 0 : stride;
            stride *= shape[d];
        }
        return s;
    }
}
