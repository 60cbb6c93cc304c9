package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;

/** The float32-fast / double-generic dispatch shared by dense, matmul and batch_matmul. */
final class MatMulKernels {
    private MatMulKernels() {}

    /** One product {@code op(A)[m×k] · op(B)[k×n]} into a fresh array of {@code outShape}. */
    static NDArray multiply(NDArray a, int aOff, int lda, boolean ta, NDArray b, int bOff, int ldb, boolean tb,
                            int m, int n, int k, DType outType, int[] outShape) {
        return batched(a, 0, lda, ta, b, 0, ldb, tb, 1, m, n, k, outType, outShape);
    }

    /**
     * {@code batches} products; batch {@code i} reads A at {@code i * aBatchStride} and B at
     * {@code i * bBatchStride} (stride 0 broadcasts a batch of one).
     */
    static NDArray batched(NDArray a, int aBatchStride, int lda, boolean ta, NDArray b, int bBatchStride, int ldb, boolean tb,
                           int batches, int m, int n, int k, DType outType, int[] outShape) {
        if (Arrays2.isF32(a) && Arrays2.isF32(b) && outType.equals(DType.FLOAT32)) {
            float[] out = new float[batches * m * n];
            for (int i = 0; i < batches; i++) {
                Gemm.sgemm(m, n, k, a.floatData(), i * aBatchStride, lda, ta, b.floatData(), i * bBatchStride, ldb, tb,
                        out, i * m * n, n);
            }
            return NDArray.wrap(DType.FLOAT32, outShape, out);
        }
        double[] ad = Arrays2.doubles(a), bd = Arrays2.doubles(b);
        double[] out = new double[batches * m * n];
        for (int i = 0; i < batches; i++) {
            Gemm.dgemm(m, n, k, ad, i * aBatchStride, ta, bd, i * bBatchStride, tb, out, i * m * n);
        }
        return Arrays2.fromDoubles(outType, outShape, out);
    }
}
