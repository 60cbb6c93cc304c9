package dev.relayfarm.ops.nn;

/**
 * Single-precision matrix multiply over primitive {@code float[]}, shared by dense, matmul,
 * batch_matmul, conv2d (im2col) and conv2d_transpose.
 *
 * <p>Why this shape: the inner loop is {@code c[j] += a0*b0[j] + a1*b1[j] + a2*b2[j] + a3*b3[j]} over
 * contiguous {@code j}, which HotSpot's C2 auto-vectorizes; folding four rank-1 updates into one
 * pass cuts the loads and stores of {@code C} fourfold. Columns are split into blocks of
 * {@link #NB} (a row of the C tile stays in L1) and the reduction into blocks of {@link #KB} (the
 * B panel, KB×NB floats, stays in L2). Transposed operands are packed into row-major copies first
 * (O(size) against O(m·n·k) work), except for a very short A times a transposed B (dense with
 * batch 1): there each output is a dot product over contiguous rows and packing B would double the
 * memory traffic of what is a matrix-vector product.
 *
 * <p>Tiles of C are independent tasks on the common ForkJoin pool.
 */
public final class Gemm {
    static final int NB = 512;
    static final int KB = 256;
    static final int MB = 32;
    /** Up to this many rows of A, A·Bᵀ is computed as dot products without packing B. */
    static final int DOT_ROWS = 4;

    private Gemm() {}

    /**
     * {@code C = op(A) · op(B)} where op(A) is m×k and op(B) is k×n. {@code A} is stored m×k
     * row-major with leading dimension {@code lda} (k×m when {@code transA}); likewise {@code B}
     * (k×n, or n×k when {@code transB}). {@code C} is m×n with leading dimension {@code ldc} and is
     * overwritten.
     */
    public static void sgemm(int m, int n, int k,
                             float[] a, int aOff, int lda, boolean transA,
                             float[] b, int bOff, int ldb, boolean transB,
                             float[] c, int cOff, int ldc) {
        if (m == 0 || n == 0) return;
        if (transA) {
            a = transpose(a, aOff, lda, k, m);
            aOff = 0;
            lda = k;
        }
        if (k == 0) {
            for (int i = 0; i < m; i++) java.util.Arrays.fill(c, cOff + i * ldc, cOff + i * ldc + n, 0f);
            return;
        }
        if (transB && m <= DOT_ROWS) {
            dots(m, n, k, a, aOff, lda, b, bOff, ldb, c, cOff, ldc);
            return;
        }
        if (transB) {
            b = transpose(b, bOff, ldb, n, k);
            bOff = 0;
            ldb = n;
        }
        final float[] fa = a, fb = b;
        final int ao = aOff, la = lda, bo = bOff, lb = ldb;
        int jBlocks = (n + NB - 1) / NB;
        int iBlocks = (m + MB - 1) / MB;
        Parallel.forEach(jBlocks * iBlocks, (long) m * n * k, t -> {
            int i0 = (t / jBlocks) * MB;
            int j0 = (t % jBlocks) * NB;
            tile(i0, Math.min(m, i0 + MB), j0, Math.min(n, j0 + NB), k, fa, ao, la, fb, bo, lb, c, cOff, ldc);
        });
    }

    /** One MB×NB tile of C, reduction blocked by KB. */
    private static void tile(int i0, int i1, int j0, int j1, int k,
                             float[] a, int aOff, int lda, float[] b, int bOff, int ldb,
                             float[] c, int cOff, int ldc) {
        for (int i = i0; i < i1; i++) java.util.Arrays.fill(c, cOff + i * ldc + j0, cOff + i * ldc + j1, 0f);
        for (int k0 = 0; k0 < k; k0 += KB) {
            int k1 = Math.min(k, k0 + KB);
            for (int i = i0; i < i1; i++) {
                int ci = cOff + i * ldc;
                int ai = aOff + i * lda;
                int kk = k0;
                for (; kk + 4 <= k1; kk += 4) {
                    float a0 = a[ai + kk], a1 = a[ai + kk + 1], a2 = a[ai + kk + 2], a3 = a[ai + kk + 3];
                    int b0 = bOff + kk * ldb;
                    int b1 = b0 + ldb, b2 = b1 + ldb, b3 = b2 + ldb;
                    for (int j = j0; j < j1; j++) {
                        c[ci + j] += a0 * b[b0 + j] + a1 * b[b1 + j] + a2 * b[b2 + j] + a3 * b[b3 + j];
                    }
                }
                for (; kk < k1; kk++) {
                    float a0 = a[ai + kk];
                    int b0 = bOff + kk * ldb;
                    for (int j = j0; j < j1; j++) c[ci + j] += a0 * b[b0 + j];
                }
            }
        }
    }

    /** C[i][j] = dot(A row i, B row j): A times a transposed B with only a few rows in A. */
    private static void dots(int m, int n, int k, float[] a, int aOff, int lda, float[] b, int bOff, int ldb,
                             float[] c, int cOff, int ldc) {
        int chunk = 64;
        int tasks = (n + chunk - 1) / chunk;
        Parallel.forEach(tasks, (long) m * n * k, t -> {
            int j0 = t * chunk, j1 = Math.min(n, j0 + chunk);
            for (int i = 0; i < m; i++) {
                int ai = aOff + i * lda;
                for (int j = j0; j < j1; j++) c[cOff + i * ldc + j] = dot(a, ai, b, bOff + j * ldb, k);
            }
        });
    }

    /** Eight independent partial sums: C2 does not vectorize float reductions, but it pipelines these. */
    static float dot(float[] x, int xo, float[] y, int yo, int k) {
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
        int i = 0;
        for (; i + 8 <= k; i += 8) {
            s0 += x[xo + i] * y[yo + i];
            s1 += x[xo + i + 1] * y[yo + i + 1];
            s2 += x[xo + i + 2] * y[yo + i + 2];
            s3 += x[xo + i + 3] * y[yo + i + 3];
            s4 += x[xo + i + 4] * y[yo + i + 4];
            s5 += x[xo + i + 5] * y[yo + i + 5];
            s6 += x[xo + i + 6] * y[yo + i + 6];
            s7 += x[xo + i + 7] * y[yo + i + 7];
        }
        for (; i < k; i++) s0 += x[xo + i] * y[yo + i];
        return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
    }

    /** Row-major rows×cols (leading dim ld) → a fresh cols×rows array. Blocked for cache reuse. */
    static float[] transpose(float[] src, int off, int ld, int rows, int cols) {
        float[] out = new float[rows * cols];
        final int blk = 32;
        for (int r0 = 0; r0 < rows; r0 += blk) {
            int r1 = Math.min(rows, r0 + blk);
            for (int c0 = 0; c0 < cols; c0 += blk) {
                int c1 = Math.min(cols, c0 + blk);
                for (int r = r0; r < r1; r++) {
                    int s = off + r * ld;
                    for (int cc = c0; cc < c1; cc++) out[cc * rows + r] = src[s + cc];
                }
            }
        }
        return out;
    }

    /** Double-precision reference product for the generic (non-float32) paths: C = op(A)·op(B). */
    public static void dgemm(int m, int n, int k, double[] a, int aOff, boolean transA, double[] b, int bOff, boolean transB,
                             double[] c, int cOff) {
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) c[cOff + i * n + j] = 0;
            for (int kk = 0; kk < k; kk++) {
                double av = transA ? a[aOff + kk * m + i] : a[aOff + i * k + kk];
                if (av == 0) continue;
                int ci = cOff + i * n;
                if (transB) {
                    for (int j = 0; j < n; j++) c[ci + j] += av * b[bOff + j * k + kk];
                } else {
                    int bi = bOff + kk * n;
                    for (int j = 0; j < n; j++) c[ci + j] += av * b[bi + j];
                }
            }
        }
    }
}
