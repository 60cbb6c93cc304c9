package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.NDArray;
import java.util.List;
import org.junit.jupiter.api.Test;

/** nn.batch_norm, nn.layer_norm, nn.lrn, nn.dropout. */
class NormalizationTest {

    @Test
    void batchNormRelation() {
        assertEquals("(Tensor[(n, 8, 4, 4), float32], Tensor[(8), float32], Tensor[(8), float32])",
                inferText("nn.batch_norm", attrs(), f32("n", 8, 4, 4), f32(8), f32(8), f32(8), f32(8)));
        assertEquals("(Tensor[(2, 3), float32], Tensor[(3), float32], Tensor[(3), float32])",
                inferText("nn.batch_norm", attrs("axis", -1), f32(2, 3), hole(), hole(), hole(), hole()));
        assertTrue(defers("nn.batch_norm", attrs(), hole(), f32(8), f32(8), f32(8), f32(8)));
        assertEquals("nn.batch_norm: moving_var must be Tensor[(8), float32] (data Tensor[(1, 8, 2, 2), float32] at axis 1), got Tensor[(4), float32]",
                relationError("nn.batch_norm", attrs(), f32(1, 8, 2, 2), f32(8), f32(8), f32(8), f32(4)));
        assertEquals("nn.batch_norm: axis must be in [-4, 3], got 4",
                relationError("nn.batch_norm", attrs("axis", 4), f32(1, 8, 2, 2), f32(8), f32(8), f32(8), f32(8)));
        assertEquals("nn.batch_norm: attribute 'epsilon' must be a number, got \"small\"",
                relationError("nn.batch_norm", attrs("epsilon", "small"), f32(1, 8, 2, 2), f32(8), f32(8), f32(8), f32(8)));
    }

    @Test
    void batchNormKernel() {
        NDArray x = arr(new int[] {1, 2, 1, 2}, 1, 2, 3, 4);
        NDArray gamma = arr(new int[] {2}, 1, 2), beta = arr(new int[] {2}, 0, 1);
        NDArray mean = arr(new int[] {2}, 1, 3), var = arr(new int[] {2}, 4, 0.25);
        List<NDArray> out = run("nn.batch_norm", attrs("epsilon", 0.0), x, gamma, beta, mean, var);
        assertEquals(3, out.size());
        assertValues(out.get(0), new int[] {1, 2, 1, 2}, 0, 0.5, 1, 5);
        assertValues(out.get(1), new int[] {2}, 1, 3);
        assertValues(out.get(2), new int[] {2}, 4, 0.25);
        // without scale and center, gamma and beta are ignored
        assertValues(run("nn.batch_norm", attrs("epsilon", 0.0, "scale", false, "center", false), x, gamma, beta, mean, var).get(0),
                new int[] {1, 2, 1, 2}, 0, 0.5, 0, 2);
    }

    @Test
    void layerNorm() {
        assertEquals("Tensor[(n, 5), float32]", inferText("nn.layer_norm", attrs(), f32("n", 5), f32(5), f32(5)));
        assertEquals("nn.layer_norm: gamma must be Tensor[(5), float32] (data Tensor[(2, 5), float32] at axis 1), got Tensor[(2), float32]",
                relationError("nn.layer_norm", attrs(), f32(2, 5), f32(2), f32(5)));
        NDArray x = arr(new int[] {2, 2}, 1, 3, 2, 2);
        NDArray out = run1("nn.layer_norm", attrs(), x, arr(new int[] {2}, 2, 1), arr(new int[] {2}, 0, 1));
        assertClose(arr(new int[] {2, 2}, -2, 2, 0, 1), out, 1e-4);
        // along axis 0
        NDArray out0 = run1("nn.layer_norm", attrs("axis", 0, "epsilon", 0.0), arr(new int[] {2, 1}, 1, 3), arr(new int[] {2}, 1, 1), arr(new int[] {2}, 0, 0));
        assertValues(out0, new int[] {2, 1}, -1, 1);
    }

    @Test
    void lrn() {
        assertEquals("Tensor[(1, 3, 4, 4), float32]", inferText("nn.lrn", attrs("size", 3), f32(1, 3, 4, 4)));
        assertEquals("nn.lrn: axis must be in [-2, 1], got 2", relationError("nn.lrn", attrs("axis", 2), f32(1, 3)));
        NDArray x = arr(new int[] {1, 3, 1, 1}, 1, 2, 3);
        NDArray out = run1("nn.lrn", attrs("size", 3, "alpha", 3.0, "bias", 1.0, "beta", 1.0), x);
        assertValues(out, new int[] {1, 3, 1, 1}, 1.0 / 6, 2.0 / 15, 3.0 / 14);
    }

    @Test
    void dropout() {
        assertEquals("(Tensor[(n, 3), float32], Tensor[(n, 3), float32])", inferText("nn.dropout", attrs("rate", 0.3), f32("n", 3)));
        assertEquals("nn.dropout: rate must be in [0, 1], got 1.5", relationError("nn.dropout", attrs("rate", 1.5), f32(2)));
        NDArray x = arr(new int[] {3}, 1, -2, 3);
        List<NDArray> out = run("nn.dropout", attrs(), x);
        assertEquals(2, out.size());
        assertSame(x, out.get(0));
        assertValues(out.get(1), new int[] {3}, 1, 1, 1);
    }
}
