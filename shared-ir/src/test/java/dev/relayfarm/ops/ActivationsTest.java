package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTesting.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import org.junit.jupiter.api.Test;

/** nn.relu, nn.leaky_relu, nn.prelu, nn.bias_add, nn.softmax, nn.log_softmax. */
class ActivationsTest {

    @Test
    void reluFamily() {
        assertEquals("Tensor[(n, ?), float32]", inferText("nn.relu", attrs(), f32("n", "?")));
        assertTrue(defers("nn.relu", attrs(), hole()));
        assertEquals("nn.relu: unknown attribute 'alpha'", relationError("nn.relu", attrs("alpha", 0.1), f32(2)));
        NDArray x = arr(new int[] {4}, -2, -0.5, 0, 3);
        assertValues(run1("nn.relu", attrs(), x), new int[] {4}, 0, 0, 0, 3);
        assertValues(run1("nn.relu", attrs(), arr(DType.INT32, new int[] {2}, -5, 5)), new int[] {2}, 0, 5);
        assertValues(run1("nn.leaky_relu", attrs("alpha", 0.1), x), new int[] {4}, -0.2, -0.05, 0, 3);
        // TVM's attribute default is 0.25
        assertValues(run1("nn.leaky_relu", attrs(), x), new int[] {4}, -0.5, -0.125, 0, 3);
        assertEquals("Tensor[(2, 3), float32]", inferText("nn.leaky_relu", attrs("alpha", 0.2), f32(2, 3)));
        assertEquals("nn.leaky_relu: attribute 'alpha' must be a number, got \"x\"", relationError("nn.leaky_relu", attrs("alpha", "x"), f32(2)));
    }

    @Test
    void prelu() {
        assertEquals("Tensor[(1, 3, 4, 4), float32]", inferText("nn.prelu", attrs(), f32(1, 3, 4, 4), f32(3)));
        assertEquals("Tensor[(1, 4, 4, 3), float32]", inferText("nn.prelu", attrs("axis", 3), f32(1, 4, 4, 3), hole()));
        assertEquals("nn.prelu: alpha must be Tensor[(3), float32] (data Tensor[(1, 3, 4, 4), float32] at axis 1), got Tensor[(4), float32]",
                relationError("nn.prelu", attrs(), f32(1, 3, 4, 4), f32(4)));
        assertEquals("nn.prelu: axis must be in [-4, 3], got 4", relationError("nn.prelu", attrs("axis", 4), f32(1, 3, 4, 4), f32(3)));
        NDArray x = arr(new int[] {1, 2, 2}, -1, 2, -3, 4);
        assertValues(run1("nn.prelu", attrs(), x, arr(new int[] {2}, 0.5, 2)), new int[] {1, 2, 2}, -0.5, 2, -6, 4);
        assertValues(run1("nn.prelu", attrs("axis", -1), x, arr(new int[] {2}, 0.5, 2)), new int[] {1, 2, 2}, -0.5, 2, -1.5, 4);
    }

    @Test
    void biasAdd() {
        assertEquals("Tensor[(n, 3, 5), float32]", inferText("nn.bias_add", attrs(), f32("n", 3, 5), f32(3)));
        assertEquals("Tensor[(2, 5), float32]", inferText("nn.bias_add", attrs("axis", -1), f32(2, 5), hole()));
        assertEquals("nn.bias_add: bias must be Tensor[(3), float32] to match data Tensor[(2, 3), float32] at axis 1, got Tensor[(4), float32]",
                relationError("nn.bias_add", attrs(), f32(2, 3), f32(4)));
        assertEquals("nn.bias_add: axis must be in [-2, 1], got 2", relationError("nn.bias_add", attrs("axis", 2), f32(2, 3), f32(3)));
        // a symbol against a size is refused, as the broadcasting add it is canonicalized into refuses it (found by fuzzing)
        assertEquals("nn.bias_add: bias must be Tensor[(n), float32] to match data Tensor[(2, n), float32] at axis 1, got Tensor[(3), float32]",
                relationError("nn.bias_add", attrs(), f32(2, "n"), f32(3)));
        assertEquals("Tensor[(2, n), float32]", inferText("nn.bias_add", attrs(), f32(2, "n"), f32("n")));
        NDArray x = arr(new int[] {2, 2, 2}, 1, 2, 3, 4, 5, 6, 7, 8);
        assertValues(run1("nn.bias_add", attrs(), x, arr(new int[] {2}, 10, 20)), new int[] {2, 2, 2}, 11, 12, 23, 24, 15, 16, 27, 28);
        assertValues(run1("nn.bias_add", attrs("axis", 2), x, arr(new int[] {2}, 10, 20)), new int[] {2, 2, 2}, 11, 22, 13, 24, 15, 26, 17, 28);
        NDArray xi = arr(DType.INT32, new int[] {1, 2}, 1, 2);
        assertValues(run1("nn.bias_add", attrs(), xi, arr(DType.INT32, new int[] {2}, 5, 6)), new int[] {1, 2}, 6, 8);
    }

    @Test
    void softmax() {
        assertEquals("Tensor[(n, 10), float32]", inferText("nn.softmax", attrs(), f32("n", 10)));
        assertEquals("nn.softmax: axis must be in [-2, 1], got 2", relationError("nn.softmax", attrs("axis", 2), f32(2, 3)));
        assertEquals("nn.log_softmax: data must be a float tensor, got Tensor[(2, 3), int32]",
                relationError("nn.log_softmax", attrs(), tensor(DType.INT32, 2, 3)));
        NDArray x = arr(new int[] {2, 2}, 0, Math.log(3), 1000, 1000);
        assertValues(run1("nn.softmax", attrs(), x), new int[] {2, 2}, 0.25, 0.75, 0.5, 0.5);
        assertValues(run1("nn.softmax", attrs("axis", 0), arr(new int[] {2, 1}, 0, Math.log(3))), new int[] {2, 1}, 0.25, 0.75);
        assertValues(run1("nn.log_softmax", attrs(), x), new int[] {2, 2}, Math.log(0.25), Math.log(0.75), Math.log(0.5), Math.log(0.5));
    }
}
