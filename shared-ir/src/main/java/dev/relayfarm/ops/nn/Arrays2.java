package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;

/** Conversions and permutations of NDArrays used by the nn kernels. */
public final class Arrays2 {
    private Arrays2() {}

    /** The elements as doubles (a fresh array); the generic path for dtypes without a fast loop. */
    public static double[] doubles(NDArray a) {
        int n = a.size();
        double[] out = new double[n];
        switch (a.data()) {
            case float[] f -> { for (int i = 0; i < n; i++) out[i] = f[i]; }
            case double[] d -> System.arraycopy(d, 0, out, 0, n);
            default -> { for (int i = 0; i < n; i++) out[i] = a.getDouble(i); }
        }
        return out;
    }

    /** Wraps doubles as {@code dtype}, rounding or truncating as a cast would. */
    public static NDArray fromDoubles(DType dtype, int[] shape, double[] values) {
        if (dtype.equals(DType.FLOAT64)) return NDArray.wrap(dtype, shape, values);
        if (dtype.equals(DType.FLOAT32)) {
            float[] f = new float[values.length];
            for (int i = 0; i < f.length; i++) f[i] = (float) values[i];
            return NDArray.wrap(dtype, shape, f);
        }
        NDArray out = NDArray.zeros(dtype, shape);
        for (int i = 0; i < values.length; i++) out.setDouble(i, values[i]);
        return out;
    }

    public static boolean isF32(NDArray a) {
        return a.dtype().equals(DType.FLOAT32);
    }

    /** Output dims of transposing {@code shape} by {@code axes}: {@code out[i] = shape[axes[i]]}. */
    public static int[] permuteShape(int[] shape, int[] axes) {
        int[] out = new int[axes.length];
        for (int i = 0; i < axes.length; i++) out[i] = shape[axes[i]];
        return out;
    }

    private static boolean identity(int[] axes) {
        for (int i = 0; i < axes.length; i++) if (axes[i] != i) return false;
        return true;
    }

    /** A transposed copy ({@code out[i0..] = a[...]} with out axis i = input axis axes[i]); any storage type. */
    public static NDArray permute(NDArray a, int[] axes) {
        if (identity(axes)) return a;
        int[] shape = a.shape();
        int rank = shape.length;
        int[] outShape = permuteShape(shape, axes);
        int[] inStride = new int[rank];
        int s = 1;
        for (int i = rank - 1; i >= 0; i--) {
            inStride[i] = s;
            s *= shape[i];
        }
        int[] stride = new int[rank]; // input stride of each output axis
        for (int i = 0; i < rank; i++) stride[i] = inStride[axes[i]];
        int n = a.size();
        int[] src = new int[n];
        int[] idx = new int[rank];
        int off = 0;
        for (int i = 0; i < n; i++) {
            src[i] = off;
            for (int d = rank - 1; d >= 0; d--) {
                idx[d]++;
                off += stride[d];
                if (idx[d] < outShape[d]) break;
                off -= stride[d] * idx[d];
                idx[d] = 0;
            }
        }
        Object data = a.data();
        Object out = switch (data) {
            case float[] f -> { float[] o = new float[n]; for (int i = 0; i < n; i++) o[i] = f[src[i]]; yield o; }
            case double[] d -> { double[] o = new double[n]; for (int i = 0; i < n; i++) o[i] = d[src[i]]; yield o; }
            case byte[] b -> { byte[] o = new byte[n]; for (int i = 0; i < n; i++) o[i] = b[src[i]]; yield o; }
            case short[] b -> { short[] o = new short[n]; for (int i = 0; i < n; i++) o[i] = b[src[i]]; yield o; }
            case int[] b -> { int[] o = new int[n]; for (int i = 0; i < n; i++) o[i] = b[src[i]]; yield o; }
            case long[] b -> { long[] o = new long[n]; for (int i = 0; i < n; i++) o[i] = b[src[i]]; yield o; }
            default -> throw new IllegalStateException("unexpected storage " + data.getClass());
        };
        if (a.dtype().lanes() != 1) throw new IllegalArgumentException("vector dtypes are not supported: " + a.dtype());
        return NDArray.wrap(a.dtype(), outShape, out);
    }

    /** Shape text for kernel errors. */
    public static String show(int[] shape) {
        return java.util.Arrays.toString(shape);
    }
}
