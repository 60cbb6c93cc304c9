package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import org.junit.jupiter.api.Test;

/** nn.cross_entropy and nn.cross_entropy_with_logits: relations and kernels against hand-computed losses. */
class LossTest {

    @Test
    void crossEntropy() {
        assertEquals("float32", inferText("nn.cross_entropy", attrs(), f32(4, 10), f32(4, 10)));
        assertEquals("float64", inferText("nn.cross_entropy", attrs(), tensor(DType.FLOAT64, "n", 3), hole()));
        // the targets' type is learnt from the predictions' and the other way round
        assertEquals("float32", inferText("nn.cross_entropy", attrs(), hole(), f32(2, 3)));
        assertTrue(defers("nn.cross_entropy", attrs(), hole(), hole()));
        assertEquals("nn.cross_entropy: predictions must have rank 2, got Tensor[(4), float32]",
                relationError("nn.cross_entropy", attrs(), f32(4), f32(4)));
        assertEquals("nn.cross_entropy: predictions must be a float tensor, got Tensor[(2, 3), int32]",
                relationError("nn.cross_entropy", attrs(), tensor(DType.INT32, 2, 3), tensor(DType.INT32, 2, 3)));
        assertEquals("nn.cross_entropy: predictions Tensor[(2, 3), float32] and targets Tensor[(2, 4), float32] must have the same type",
                relationError("nn.cross_entropy", attrs(), f32(2, 3), f32(2, 4)));
        assertEquals("nn.cross_entropy: unknown attribute 'axis'", relationError("nn.cross_entropy", attrs("axis", 1), f32(2, 3), f32(2, 3)));
        // one-hot targets pick -log of the true class's probability, averaged over the batch of 2
        NDArray p = arr(new int[] {2, 2}, 0.25, 0.75, 0.5, 0.5);
        NDArray t = arr(new int[] {2, 2}, 0, 1, 1, 0);
        NDArray loss = run1("nn.cross_entropy", attrs(), p, t);
        assertValues(loss, new int[0], -(Math.log(0.75) + Math.log(0.5)) / 2);
        assertEquals(DType.FLOAT32, loss.dtype());
        NDArray soft = arr(DType.FLOAT64, new int[] {1, 3}, 0.2, 0.3, 0.5);
        NDArray st = arr(DType.FLOAT64, new int[] {1, 3}, 0.1, 0.6, 0.3);
        assertValues(run1("nn.cross_entropy", attrs(), soft, st), new int[0], -(0.1 * Math.log(0.2) + 0.6 * Math.log(0.3) + 0.3 * Math.log(0.5)));
    }

    @Test
    void crossEntropyWithLogits() {
        assertEquals("float32", inferText("nn.cross_entropy_with_logits", attrs(), f32("n", 5), f32("n", 5)));
        assertEquals("nn.cross_entropy_with_logits: targets must have rank 2, got Tensor[(2, 3, 1), float32]",
                relationError("nn.cross_entropy_with_logits", attrs(), f32(2, 3), f32(2, 3, 1)));
        assertEquals("nn.cross_entropy_with_logits: predictions Tensor[(2, 3), float32] and targets Tensor[(2, 3), float64] must have the same type",
                relationError("nn.cross_entropy_with_logits", attrs(), f32(2, 3), tensor(DType.FLOAT64, 2, 3)));
        // no log is taken: the predictions are log-probabilities already
        NDArray logp = arr(new int[] {2, 2}, Math.log(0.25), Math.log(0.75), Math.log(0.5), Math.log(0.5));
        NDArray t = arr(new int[] {2, 2}, 0, 1, 1, 0);
        assertValues(run1("nn.cross_entropy_with_logits", attrs(), logp, t), new int[0], -(Math.log(0.75) + Math.log(0.5)) / 2);
        assertValues(run1("nn.cross_entropy_with_logits", attrs(), arr(new int[] {1, 2}, 2, -3), arr(new int[] {1, 2}, 0.5, 2)), new int[0], 5);
    }
}
