package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** nn.dense, nn.matmul and nn.batch_matmul. */
class DenseMatmulTest {

    @Test
    void denseRelation() {
        assertEquals("Tensor[(2, 3), float32]", inferText("nn.dense", attrs(), f32(2, 5), f32(3, 5)));
        assertEquals("Tensor[(n, 7, 3), float32]", inferText("nn.dense", attrs("units", 3), f32("n", 7, 5), f32(3, 5)));
        assertEquals("Tensor[(?, 3), int32]", inferText("nn.dense", attrs("out_dtype", "int32"), tensor(DType.INT8, "?", 5), tensor(DType.INT8, 3, 5)));
        assertEquals("Tensor[(2, 4), float32]", inferText("nn.dense", attrs("units", 4), f32(2, 5), hole()));
        assertTrue(defers("nn.dense", attrs(), f32(2, 5), hole()));
        assertTrue(defers("nn.dense", attrs(), hole(), f32(3, 5)));
        assertEquals("nn.dense: data (2, 5) and weight (3, 4) disagree on the reduction dim (5 vs 4)",
                relationError("nn.dense", attrs(), f32(2, 5), f32(3, 4)));
        assertEquals("nn.dense: units=4 does not match weight (3, 5)", relationError("nn.dense", attrs("units", 4), f32(2, 5), f32(3, 5)));
        assertEquals("nn.dense: weight must have rank 2, got Tensor[(5), float32]", relationError("nn.dense", attrs(), f32(2, 5), f32(5)));
        assertEquals("nn.dense: unknown attribute 'unit'", relationError("nn.dense", attrs("unit", 3), f32(2, 5), f32(3, 5)));
    }

    @Test
    void denseByHand() {
        NDArray x = arr(new int[] {2, 3}, 1, 2, 3, 4, 5, 6);
        NDArray w = arr(new int[] {2, 3}, 1, 0, -1, 0.5, 0.5, 0.5);
        assertValues(run1("nn.dense", attrs(), x, w), new int[] {2, 2}, -2, 3, -2, 7.5);
        NDArray xi = arr(DType.INT8, new int[] {1, 2}, 100, 100);
        NDArray wi = arr(DType.INT8, new int[] {1, 2}, 100, 100);
        assertValues(run1("nn.dense", attrs("out_dtype", "int32"), xi, wi), new int[] {1, 1}, 20000);
    }

    @Test
    void denseMatchesNaiveOnRandomShapes() {
        Random rnd = new Random(3);
        int[][] shapes = {{1, 2048, 100}, {3, 7, 5}, {64, 300, 70}, {5, 1, 9}, {17, 33, 65}};
        for (int[] s : shapes) {
            NDArray x = random(rnd, s[0], s[1]), w = random(rnd, s[2], s[1]);
            assertClose(naive(x, w, false, true), run1("nn.dense", attrs(), x, w), 1e-4);
        }
        // three-dimensional data
        NDArray x = random(rnd, 2, 3, 4), w = random(rnd, 5, 4);
        NDArray got = run1("nn.dense", attrs(), x, w);
        NDArray flat = run1("nn.dense", attrs(), NDArray.wrap(DType.FLOAT32, new int[] {6, 4}, x.floatData()), w);
        assertEquals(java.util.Arrays.toString(new int[] {2, 3, 5}), java.util.Arrays.toString(got.shape()));
        assertClose(NDArray.wrap(DType.FLOAT32, new int[] {2, 3, 5}, flat.floatData()), got, 0);
    }

    @Test
    void matmulRelationAndKernel() {
        assertEquals("Tensor[(2, 3), float32]", inferText("nn.matmul", attrs(), f32(2, 5), f32(5, 3)));
        assertEquals("Tensor[(2, 3), float32]", inferText("nn.matmul", attrs("transpose_b", true), f32(2, 5), f32(3, 5)));
        assertEquals("Tensor[(m, 3), float32]", inferText("nn.matmul", attrs("transpose_a", true), f32(5, "m"), f32(5, 3)));
        assertEquals("nn.matmul: tensor_a (2, 5) and tensor_b (4, 3) disagree on the reduction dim (5 vs 4)",
                relationError("nn.matmul", attrs(), f32(2, 5), f32(4, 3)));
        assertTrue(defers("nn.matmul", attrs(), f32(2, 5), hole()));
        Random rnd = new Random(5);
        for (boolean ta : new boolean[] {false, true}) {
            for (boolean tb : new boolean[] {false, true}) {
                NDArray a = ta ? random(rnd, 37, 20) : random(rnd, 20, 37);
                NDArray b = tb ? random(rnd, 45, 37) : random(rnd, 37, 45);
                assertClose(naive(a, b, ta, tb), run1("nn.matmul", attrs("transpose_a", ta, "transpose_b", tb), a, b), 1e-4);
            }
        }
        NDArray a = arr(new int[] {1, 2}, 1, 2);
        NDArray b = arr(new int[] {2, 2}, 1, 2, 3, 4);
        assertValues(run1("nn.matmul", attrs(), a, b), new int[] {1, 2}, 7, 10);
    }

    @Test
    void batchMatmulRelation() {
        assertEquals("Tensor[(4, 2, 3), float32]", inferText("nn.batch_matmul", attrs(), f32(4, 2, 5), f32(4, 3, 5)));
        assertEquals("Tensor[(4, 2, 3), float32]", inferText("nn.batch_matmul", attrs("transpose_b", false), f32(4, 2, 5), f32(1, 5, 3)));
        assertEquals("Tensor[(b, 5, 3), float32]", inferText("nn.batch_matmul", attrs("transpose_a", true), f32(1, 2, 5), f32("b", 3, 2)));
        assertEquals("Tensor[(4, 2, 3), float32]", inferText("nn.batch_matmul", attrs(), f32("?", 2, 5), f32(4, 3, 5)));
        assertEquals("nn.batch_matmul: x (4, 2, 5) and y (4, 5, 3) disagree on the reduction dim (5 vs 3)",
                relationError("nn.batch_matmul", attrs(), f32(4, 2, 5), f32(4, 5, 3)));
        assertEquals("nn.batch_matmul: batch dims of x (2, 2, 5) and y (3, 3, 5) are not broadcastable (2 vs 3)",
                relationError("nn.batch_matmul", attrs(), f32(2, 2, 5), f32(3, 3, 5)));
        assertEquals("nn.batch_matmul: x must have rank 3, got Tensor[(2, 5), float32]",
                relationError("nn.batch_matmul", attrs(), f32(2, 5), f32(3, 3, 5)));
    }

    @Test
    void batchMatmulKernel() {
        Random rnd = new Random(9);
        for (boolean ta : new boolean[] {false, true}) {
            for (boolean tb : new boolean[] {false, true}) {
                for (int[] batches : new int[][] {{3, 3}, {1, 3}, {3, 1}}) {
                    NDArray x = ta ? random(rnd, batches[0], 6, 4) : random(rnd, batches[0], 4, 6);
                    NDArray y = tb ? random(rnd, batches[1], 5, 6) : random(rnd, batches[1], 6, 5);
                    NDArray got = run1("nn.batch_matmul", attrs("transpose_a", ta, "transpose_b", tb), x, y);
                    NDArray want = NDArray.zeros(DType.FLOAT32, 3, 4, 5);
                    for (int b = 0; b < 3; b++)
                        for (int i = 0; i < 4; i++)
                            for (int j = 0; j < 5; j++) {
                                double acc = 0;
                                int bx = batches[0] == 1 ? 0 : b, by = batches[1] == 1 ? 0 : b;
                                for (int k = 0; k < 6; k++) {
                                    double xv = ta ? x.getDouble((bx * 6 + k) * 4 + i) : x.getDouble((bx * 4 + i) * 6 + k);
                                    double yv = tb ? y.getDouble((by * 5 + j) * 6 + k) : y.getDouble((by * 6 + k) * 5 + j);
                                    acc += xv * yv;
                                }
                                want.setDouble((b * 4 + i) * 5 + j, acc);
                            }
                    assertClose(want, got, 1e-5);
                }
            }
        }
    }

    /** op(a) · op(b) with the obvious triple loop. */
    static NDArray naive(NDArray a, NDArray b, boolean ta, boolean tb) {
        int m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1), n = tb ? b.dim(0) : b.dim(1);
        NDArray out = NDArray.zeros(DType.FLOAT32, m, n);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int kk = 0; kk < k; kk++) {
                    acc += (ta ? a.getDouble(kk * m + i) : a.getDouble(i * k + kk)) * (tb ? b.getDouble(j * k + kk) : b.getDouble(kk * n + j));
                }
                out.setDouble(i * n + j, acc);
            }
        return out;
    }
}
