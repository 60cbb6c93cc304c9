package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.Arrays;

/**
 * The data-movement primitives the transform kernels are built from. They work on the primitive
 * storage of any dtype without boxing: contiguous runs go through {@link System#arraycopy} (which
 * takes any primitive array), strided runs through one typed loop per storage class, chosen once per
 * run rather than per element. Positions are in logical elements; an array with SIMD lanes moves
 * {@code lanes} stored scalars per element.
 */
final class Movement {
    private Movement() {}

    /** A fresh, not yet shared array to fill. */
    static NDArray allocate(DType dtype, int[] shape) {
        return NDArray.zeros(dtype, shape);
    }

    /**
     * Materializes a strided view of {@code src}: output element {@code (i0, ..., ik)} is source
     * element {@code offset + sum(i_j * strides[j])}. Strides may be 0 (broadcast), negative
     * (reverse) or permuted (transpose); transpose, slicing, broadcasting, tiling, reversing and layout
     * changes are all such views.
     */
    static NDArray view(NDArray src, int[] outShape, long offset, long[] strides) {
        int lanes = src.dtype().lanes();
        int rank = outShape.length;
        int[] shape = outShape;
        long[] st = strides;
        long off = offset;
        if (lanes > 1) {
            // Lanes become one more, contiguous axis so the loops below need not know about them.
            shape = Arrays.copyOf(outShape, rank + 1);
            shape[rank] = lanes;
            st = new long[rank + 1];
            for (int i = 0; i < rank; i++) st[i] = strides[i] * lanes;
            st[rank] = 1;
            off = offset * lanes;
            rank++;
        }
        NDArray out = allocate(src.dtype(), outShape);
        int total = out.elementCount();
        if (total == 0) return out;
        Object from = src.data();
        Object to = out.data();
        if (rank == 0) {
            System.arraycopy(from, (int) off, to, 0, 1);
            return out;
        }
        int inner = shape[rank - 1];
        int innerStride = Math.toIntExact(st[rank - 1]);
        int[] index = new int[rank - 1];
        long base = off;
        for (int pos = 0; pos < total; pos += inner) {
            copyRun(from, Math.toIntExact(base), innerStride, to, pos, inner);
            // Odometer over the outer axes, keeping the source base offset incrementally.
            for (int ax = rank - 2; ax >= 0; ax--) {
                index[ax]++;
                base += st[ax];
                if (index[ax] < shape[ax]) break;
                base -= st[ax] * shape[ax];
                index[ax] = 0;
            }
        }
        return out;
    }

    /** Copies {@code len} source scalars starting at {@code from} with step {@code stride} into contiguous {@code dst}. */
    private static void copyRun(Object src, int from, int stride, Object dst, int to, int len) {
        if (stride == 1) {
            System.arraycopy(src, from, dst, to, len);
            return;
        }
        switch (src) {
            case float[] s -> { float[] d = (float[]) dst; for (int i = 0; i < len; i++) d[to + i] = s[from + i * stride]; }
            case double[] s -> { double[] d = (double[]) dst; for (int i = 0; i < len; i++) d[to + i] = s[from + i * stride]; }
            case byte[] s -> { byte[] d = (byte[]) dst; for (int i = 0; i < len; i++) d[to + i] = s[from + i * stride]; }
            case short[] s -> { short[] d = (short[]) dst; for (int i = 0; i < len; i++) d[to + i] = s[from + i * stride]; }
            case int[] s -> { int[] d = (int[]) dst; for (int i = 0; i < len; i++) d[to + i] = s[from + i * stride]; }
            case long[] s -> { long[] d = (long[]) dst; for (int i = 0; i < len; i++) d[to + i] = s[from + i * stride]; }
            default -> throw new IllegalStateException("not an NDArray storage: " + src.getClass());
        }
    }

    /**
     * Output element {@code i} is source element {@code sourceIndex[i]} (gather by an index map,
     * for moves that are not strided views, like {@code gather}).
     */
    static NDArray gather(NDArray src, int[] outShape, int[] sourceIndex) {
        NDArray out = allocate(src.dtype(), outShape);
        int lanes = src.dtype().lanes();
        Object from = src.data();
        Object to = out.data();
        if (lanes > 1) {
            for (int i = 0; i < sourceIndex.length; i++) System.arraycopy(from, sourceIndex[i] * lanes, to, i * lanes, lanes);
            return out;
        }
        int n = sourceIndex.length;
        switch (from) {
            case float[] s -> { float[] d = (float[]) to; for (int i = 0; i < n; i++) d[i] = s[sourceIndex[i]]; }
            case double[] s -> { double[] d = (double[]) to; for (int i = 0; i < n; i++) d[i] = s[sourceIndex[i]]; }
            case byte[] s -> { byte[] d = (byte[]) to; for (int i = 0; i < n; i++) d[i] = s[sourceIndex[i]]; }
            case short[] s -> { short[] d = (short[]) to; for (int i = 0; i < n; i++) d[i] = s[sourceIndex[i]]; }
            case int[] s -> { int[] d = (int[]) to; for (int i = 0; i < n; i++) d[i] = s[sourceIndex[i]]; }
            case long[] s -> { long[] d = (long[]) to; for (int i = 0; i < n; i++) d[i] = s[sourceIndex[i]]; }
            default -> throw new IllegalStateException("not an NDArray storage: " + from.getClass());
        }
        return out;
    }

    /** Copies {@code count} elements from {@code src} at element {@code from} into {@code dst} at element {@code to}. */
    static void copyElements(NDArray src, int from, NDArray dst, int to, int count) {
        int lanes = src.dtype().lanes();
        System.arraycopy(src.data(), from * lanes, dst.data(), to * lanes, count * lanes);
    }

    /** Same storage, new shape: the arrays are immutable once shared, so reshaping needs no copy. */
    static NDArray reshaped(NDArray src, int[] shape) {
        return NDArray.wrap(src.dtype(), shape, src.data());
    }

    /** {@code value} (any dtype) converted to a one-element array of {@code dtype}, as a cast would. */
    static NDArray castScalar(NDArray value, DType dtype) {
        NDArray out = allocate(dtype.element(), new int[0]);
        // Integer to integer goes through long so that int64 values survive exactly.
        if (!dtype.isFloat() && !value.dtype().isFloat()) out.setLong(0, value.getLong(0));
        else out.setDouble(0, value.getDouble(0));
        return out;
    }

    /** An array of {@code shape} with every element equal to {@code scalar}'s single element (same dtype). */
    static NDArray filled(DType dtype, int[] shape, NDArray scalar) {
        NDArray out = allocate(dtype, shape);
        int lanes = dtype.lanes();
        Object d = out.data();
        Object s = scalar.data();
        if (lanes > 1) {
            for (int i = 0; i < out.size(); i++) {
                for (int l = 0; l < lanes; l++) System.arraycopy(s, 0, d, i * lanes + l, 1);
            }
            return out;
        }
        switch (d) {
            case float[] a -> Arrays.fill(a, ((float[]) s)[0]);
            case double[] a -> Arrays.fill(a, ((double[]) s)[0]);
            case byte[] a -> Arrays.fill(a, ((byte[]) s)[0]);
            case short[] a -> Arrays.fill(a, ((short[]) s)[0]);
            case int[] a -> Arrays.fill(a, ((int[]) s)[0]);
            case long[] a -> Arrays.fill(a, ((long[]) s)[0]);
            default -> throw new IllegalStateException("not an NDArray storage: " + d.getClass());
        }
        return out;
    }

    /** An array of {@code shape} filled with the number {@code value} converted to {@code dtype}. */
    static NDArray filled(DType dtype, int[] shape, double value) {
        NDArray one = allocate(dtype.element(), new int[0]);
        one.setDouble(0, value);
        return filled(dtype, shape, one);
    }

    /** Row-major element strides of {@code shape}. */
    static long[] strides(int[] shape) {
        long[] s = new long[shape.length];
        long acc = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            s[i] = acc;
            acc *= shape[i];
        }
        return s;
    }

    static int product(int[] shape, int from, int to) {
        long p = 1;
        for (int i = from; i < to; i++) p *= shape[i];
        return Math.toIntExact(p);
    }
}
