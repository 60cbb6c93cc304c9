package dev.relayfarm.tuning.measure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The correctness check: float sums in another order pass (a fixed ONNX atol would not), a value off by the output's
 * order of magnitude or never written (the driver's NaN poison) fails.
 */
class OutputCheckTest {
    private static final int N = 256, K = 1024;
    private static final KernelSignature SIG = new KernelSignature("k", List.of(new TensorSpec("out", List.of(N), DType.FLOAT32)), 0);

    /**
     * N sums of K products of values in [-1, 1), summed in float32 forwards ({@code reversed}: backwards). Every other
     * sum cancels exactly (each term also appears negated), as a convolution's output near 0 does: its float result
     * is rounding error alone, so the two orders differ there by far more than its own magnitude.
     */
    private static NDArray sums(boolean reversed) {
        Random r = new Random(42);
        float[] out = new float[N];
        for (int i = 0; i < N; i++) {
            float[] terms = new float[K];
            for (int k = 0; k < K; k++) terms[k] = (r.nextFloat() * 2 - 1) * (r.nextFloat() * 2 - 1);
            if (i % 2 == 1) {
                for (int k = 0; k < K / 2; k++) terms[K / 2 + k] = -terms[k];
                for (int k = K - 1; k > 0; k--) { // shuffle, so the pairs do not cancel one by one
                    int j = r.nextInt(k + 1);
                    float t = terms[k];
                    terms[k] = terms[j];
                    terms[j] = t;
                }
            }
            float acc = 0;
            for (int k = 0; k < K; k++) acc += terms[reversed ? K - 1 - k : k];
            out[i] = acc;
        }
        return NDArray.wrap(DType.FLOAT32, new int[] {N}, out);
    }

    @Test
    void aReorderedFloatSumMatches() {
        NDArray expected = sums(false), actual = sums(true);
        assertTrue(Tolerance.ONNX_DEFAULT.compare(actual, expected).isPresent(), "the cancelling sums differ by more than 1e-7 + 1e-3 relative");
        assertEquals(Optional.empty(), OutputCheck.compare(SIG, List.of(actual), List.of(expected)));
    }

    @Test
    void aShiftedValueOrAnUnwrittenOneDiffers() {
        NDArray expected = sums(false);
        NDArray shifted = sums(false);
        shifted.setDouble(7, shifted.getDouble(7) + 0.5);
        Optional<String> m = OutputCheck.compare(SIG, List.of(shifted), List.of(expected));
        assertTrue(m.isPresent() && m.get().startsWith("output out: 1 of 256 values differ") && m.get().contains("[7]"), m.toString());
        NDArray unwritten = sums(false);
        unwritten.setDouble(9, Float.NaN);
        assertTrue(OutputCheck.compare(SIG, List.of(unwritten), List.of(expected)).isPresent());
    }

    @Test
    void decodesTheDriversOutputFileBySignature() {
        KernelSignature two = new KernelSignature("k", List.of(new TensorSpec("in", List.of(3), DType.FLOAT32),
                new TensorSpec("a", List.of(2), DType.FLOAT32), new TensorSpec("b", List.of(1), DType.INT64)), 1);
        ByteBuffer b = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putFloat(1.5f).putFloat(-2f).putLong(7);
        List<NDArray> out = OutputCheck.decode(two, b.array());
        assertEquals(2, out.size());
        assertEquals(-2.0, out.get(0).getDouble(1));
        assertEquals(7, out.get(1).getLong(0));
    }
}
