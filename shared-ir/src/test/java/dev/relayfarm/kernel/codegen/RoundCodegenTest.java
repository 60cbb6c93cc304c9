package dev.relayfarm.kernel.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.kernel.lower.PrimitiveLowering;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.runtime.KernelLibrary;
import dev.relayfarm.text.RelayParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * float32 {@code round} compiles to {@code rf_roundf} ({@link CEmitter#ROUND_PRELUDE}), C's {@code roundf} (half away
 * from zero) written so that gcc vectorizes it under its default flags: compiled and run, it must equal
 * {@link Math#round}'s rule bit for bit, signed zeros included, on the values where a rounding trick goes wrong: ties,
 * the float just below a tie, the largest non-integers near 2^23, integers beyond it, infinities and NaN.
 */
class RoundCodegenTest {
    private static final String KERNEL = """
            fn (%x: Tensor[({n}), float32], Primitive=1) {
              %0 = divide(%x, 0.5f);
              %1 = round(%0);
              multiply(%1, 0.5f)
            }""";

    @Test
    void roundIsTheVectorizableHelper() {
        LoweredKernel k = PrimitiveLowering.lower((Function) RelayParser.parseExpr(KERNEL.replace("{n}", "8")), "round_helper", Target.host(), Optional.empty());
        String c = new CModule(List.of(k.func())).source();
        assertTrue(c.contains("rf_roundf("), c);
        assertFalse(c.replace("rf_roundf", "").contains("roundf("), "no libm roundf call left:\n" + c);
    }

    @Test
    void matchesRoundHalfAwayFromZeroBitForBit() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        List<Float> xs = new ArrayList<>();
        // ties and their neighbours, in both signs; the scale 0.5 in the kernel is exact, so round sees 2 * x
        for (float t : new float[] {0.5f, 1.5f, 2.5f, 3.5f, 1e6f + 0.5f, 4194303.5f, 8388607.5f}) {
            for (float v : new float[] {t, Math.nextDown(t), Math.nextUp(t)}) {
                xs.add(v / 2);
                xs.add(-v / 2);
            }
        }
        for (float v : new float[] {0f, -0f, 0.25f, -0.25f, Math.nextDown(0.5f), Float.MIN_VALUE, -Float.MIN_VALUE, 8388608f, 8388609f, 16777217f,
                1e30f, -1e30f, Float.MAX_VALUE / 4, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN}) {
            xs.add(v / 2);
        }
        Random r = new Random(7);
        while (xs.size() % 16 != 0 || xs.size() < 1024) xs.add((float) (r.nextGaussian() * Math.pow(10, r.nextInt(8))));
        int n = xs.size();
        LoweredKernel k = PrimitiveLowering.lower((Function) RelayParser.parseExpr(KERNEL.replace("{n}", Integer.toString(n))), "round_edges", Target.host(), Optional.empty());
        double[] in = new double[n];
        for (int i = 0; i < n; i++) in[i] = xs.get(i);
        try (KernelLibrary lib = KernelLibrary.build(new CModule(List.of(k.func())), CCompiler.host().orElseThrow())) {
            NDArray out = lib.kernel("round_edges").run(List.of(NDArray.fromDoubles(DType.FLOAT32, new int[] {n}, in))).getFirst();
            for (int i = 0; i < n; i++) {
                float x = xs.get(i) / 0.5f, expected = roundHalfAwayFromZero(x) * 0.5f, actual = (float) out.getDouble(i);
                if (Float.isNaN(expected)) {
                    assertTrue(Float.isNaN(actual), "round(NaN) is NaN, got " + actual);
                } else {
                    assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(actual), "round(" + x + ") * 0.5: expected " + expected + ", got " + actual);
                }
            }
        }
    }

    /** C's roundf: the integer nearest to x, a tie away from zero, the sign kept (round(-0.3) is -0.0). */
    private static float roundHalfAwayFromZero(float x) {
        if (Float.isNaN(x) || Float.isInfinite(x) || Math.abs(x) >= 8388608f) return x;
        double f = Math.floor(Math.abs((double) x));
        double a = Math.abs((double) x) - f >= 0.5 ? f + 1 : f;
        return Math.copySign((float) a, x);
    }
}
