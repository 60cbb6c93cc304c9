package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * float16/bfloat16 kernels against the interpreter: casts compared byte for byte (NaN payloads
 * included) over every 16-bit pattern as a source, and over float32/float64/integer sources chosen
 * where rounding is delicate (halfway points, one ulp either side, the overflow threshold,
 * subnormals, values that round twice wrongly through float32); arithmetic (computed in float32,
 * rounded per operator) compared exactly with NaN equal to any NaN (which NaN x86 produces for
 * NaN operands depends on operand order, which the C compiler may swap for commutative operators).
 */
class HalfComputesTest {
    private static final OpKernelCases CASTS = new OpKernelCases().bitExact();
    private static final OpKernelCases ARITH = new OpKernelCases().exact();
    private static final OpKernelCases WIDENED = new OpKernelCases().halfTolerance();
    private static final String[] HALVES = {"float16", "bfloat16"};

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        for (String h : HALVES) {
            String other = h.equals("float16") ? "bfloat16" : "float16";
            for (String to : new String[] {"float32", "float64", other, "bool"}) cast(h, 65536, to, HalfComputesTest::everyPattern);
            // within int32 (C leaves out-of-range float-to-int conversion undefined; the interpreter saturates)
            cast(h, 4096, "int32", OpKernelCases.uniform(-65000, 65000));
            cast(h, 4096, "int64", OpKernelCases.uniform(-65000, 65000));
            cast("float32", 8192, h, HalfComputesTest::float32Edges);
            cast("float64", 8192, h, HalfComputesTest::float64Edges);
            for (String from : new String[] {"int32", "int64", "uint8", "int16"}) cast(from, 4096, h, HalfComputesTest::integerEdges);
            for (String op : new String[] {"add", "subtract", "multiply", "divide", "less", "equal"}) {
                ARITH.add("fn (%a: Tensor[(4096), " + h + "], %b: Tensor[(4096), " + h + "]) { " + op + "(%a, %b) }",
                        HalfComputesTest::randomPatterns, HalfComputesTest::randomPatterns);
            }
            // max/min: C's a > b ? a : b does not propagate a NaN operand as the interpreter does (documented in CEmitter)
            for (String op : new String[] {"maximum", "minimum"}) {
                ARITH.add("fn (%a: Tensor[(4096), " + h + "], %b: Tensor[(4096), " + h + "]) { " + op + "(%a, %b) }",
                        finite(HalfComputesTest::randomPatterns), finite(HalfComputesTest::randomPatterns));
            }
            // broadcasting against a float16 row, and a unary op
            ARITH.add("fn (%a: Tensor[(64, 64), " + h + "], %b: Tensor[(64), " + h + "]) { multiply(%a, %b) }",
                    HalfComputesTest::randomPatterns, HalfComputesTest::randomPatterns);
            ARITH.add("fn (%a: Tensor[(4096), " + h + "]) { negative(%a) }", HalfComputesTest::randomPatterns);
            ARITH.add("fn (%a: Tensor[(4096), " + h + "]) { nn.relu(%a) }", finite(HalfComputesTest::randomPatterns));
            ARITH.add("fn (%a: Tensor[(16, 8), " + h + "]) { transpose(%a, axes=[1, 0]) }", HalfComputesTest::randomPatterns);
            ARITH.add("fn (%a: Tensor[(16, 8), " + h + "]) { reshape(%a, newshape=[8, 16]) }", HalfComputesTest::randomPatterns);
            ARITH.add("fn (%c: Tensor[(64), bool], %a: Tensor[(64), " + h + "], %b: Tensor[(64), " + h + "]) { where(%c, %a, %b) }",
                    null, HalfComputesTest::randomPatterns, HalfComputesTest::randomPatterns);
        }
        // operators computed in float32 over widened inputs and rounded once; the interpreter may compute in
        // float64, so these are compared within the float32 tolerance (before the final rounding both agree
        // to float32 rounding, which leaves the rounded results equal or one 16-bit ulp apart)
        for (String h : HALVES) {
            WIDENED.add("fn (%a: Tensor[(2, 8, 16), " + h + "], %b: Tensor[(2, 16, 4), " + h + "]) { nn.batch_matmul(%a, %b, transpose_b=False) }", small(), small());
            WIDENED.add("fn (%a: Tensor[(8, 16), " + h + "]) { max(%a, axis=[1]) }", HalfComputesTest::randomFinite);
            WIDENED.add("fn (%a: Tensor[(8, 16), " + h + "]) { sum(%a, axis=[1]) }", small());
            WIDENED.add("fn (%a: Tensor[(8, 16), " + h + "]) { nn.softmax(%a, axis=1) }", small());
            WIDENED.add("fn (%a: Tensor[(256), " + h + "]) { exp(%a) }", small());
            WIDENED.add("fn (%a: Tensor[(1, 2, 6, 6), " + h + "], %w: Tensor[(3, 2, 3, 3), " + h + "]) { nn.conv2d(%a, %w, padding=[1, 1, 1, 1]) }", small(), small());
        }
        WIDENED.add("fn (%a: Tensor[(2, 4, 1, 11), float16], %w: Tensor[(4, 1, 1, 4), float16]) { nn.conv2d(%a, %w, groups=4, channels=4, kernel_size=[1, 4]) }", small(), small());
        WIDENED.add("fn (%a: Tensor[(64), float16]) { sigmoid(%a) }", small());
        WIDENED.build();
        CASTS.build();
        ARITH.build();
    }

    private static void cast(String from, int n, String to, OpKernelCases.Gen gen) {
        CASTS.add("fn (%x: Tensor[(" + n + "), " + from + "]) { cast(%x, dtype=\"" + to + "\") }", gen);
    }

    @AfterAll
    static void close() {
        CASTS.close();
        ARITH.close();
        WIDENED.close();
    }

    @Test
    void otherOperatorsComputeInFloat32AndRoundOnce() {
        WIDENED.assertAllMatch(20261127L);
    }

    /** Values in [-2, 2) rounded to the 16-bit dtype. */
    private static OpKernelCases.Gen small() {
        return OpKernelCases.uniform(-2, 2);
    }

    private static NDArray randomFinite(Random rnd, DType t, int[] shape) {
        return finite(HalfComputesTest::randomPatterns).make(rnd, t, shape);
    }

    @Test
    void castsMatchTheInterpreterBitForBit() {
        CASTS.assertAllMatch(20261127L);
    }

    @Test
    void arithmeticComputedInFloat32MatchesTheInterpreter() {
        ARITH.assertAllMatch(20261127L);
    }

    /** Every 16-bit pattern, in order (the array must have 65536 elements). */
    private static NDArray everyPattern(Random rnd, DType t, int[] shape) {
        short[] s = new short[NDArray.elementCount(t, shape)];
        for (int i = 0; i < s.length; i++) s[i] = (short) i;
        return NDArray.wrap(t, shape, s);
    }

    private static NDArray randomPatterns(Random rnd, DType t, int[] shape) {
        short[] s = new short[NDArray.elementCount(t, shape)];
        for (int i = 0; i < s.length; i++) s[i] = (short) rnd.nextInt(1 << 16);
        return NDArray.wrap(t, shape, s);
    }

    /** {@code g} with NaN and infinite elements replaced by finite ones. */
    private static OpKernelCases.Gen finite(OpKernelCases.Gen g) {
        return (rnd, t, shape) -> {
            NDArray a = g.make(rnd, t, shape);
            short[] s = (short[]) a.data();
            for (int i = 0; i < s.length; i++) if (!Double.isFinite(a.getDouble(i))) s[i] = (short) (s[i] & 0x83ff);
            return a;
        };
    }

    /** The value of the 16-bit float bits {@code h} of {@code t}. */
    private static double value(DType t, int h) {
        return NDArray.wrap(t, new int[] {1}, new short[] {(short) h}).getDouble(0);
    }

    /** The gap above the 16-bit float value {@code h} (positive, finite, below the largest). */
    private static double ulpAbove(DType t, int h) {
        return value(t, h + 1) - value(t, h);
    }

    /**
     * Points around the grid of the 16-bit float format {@code half}: each value, the midpoint to the
     * next one, and {@code nudge} either side of both (the nudge scaled to the gap), signs mixed.
     */
    private static List<Double> gridPoints(Random rnd, DType half, int count, double relativeNudge) {
        List<Double> v = new ArrayList<>();
        int top = half.code() == DType.Code.BFLOAT ? 0x7f7f : 0x7bff;
        while (v.size() < count) {
            int h = rnd.nextInt(top); // finite, positive, below the largest
            double x = value(half, h), gap = ulpAbove(half, h), mid = x + gap / 2;
            double s = rnd.nextBoolean() ? 1 : -1;
            for (double p : new double[] {x, mid, mid + gap * relativeNudge, mid - gap * relativeNudge}) v.add(s * p);
        }
        return v;
    }

    private static final double[] SPECIALS = {0.0, -0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN,
        65504, 65519, 65520, 65536, 1e10, Float.MAX_VALUE, 0x1p-24, 0x1p-25, 0x1.0000000000001p-25, 0x3p-25, 0x1p-14, 0x7ffp-25,
        1 + 0x1p-11, 1 + 0x3p-11, 2049, 2051, Float.MIN_VALUE, 0x1p-126, 1 + 0x1p-8, 1 + 0x3p-8, 0x1.fe8p127, 0x1.ff8p127};

    private static NDArray float32Edges(Random rnd, DType t, int[] shape) {
        int n = NDArray.elementCount(t, shape);
        float[] f = new float[n];
        int i = 0;
        for (double s : SPECIALS) {
            f[i++] = (float) s;
            f[i++] = (float) -s;
        }
        // NaNs with payloads (quiet and signaling, both signs)
        for (int bits : new int[] {0x7fc00000, 0xffc00000, 0x7f800001, 0x7fa00000, 0x7f802000, 0x7f801000, 0xffbfffff, 0x7f800fff}) f[i++] = Float.intBitsToFloat(bits);
        for (DType half : new DType[] {DType.FLOAT16, DType.BFLOAT16}) {
            for (double p : gridPoints(rnd, half, n / 4, 0x1p-20)) if (i < n / 2 + n / 4 * (half == DType.FLOAT16 ? 0 : 1) && i < n) f[i++] = (float) p;
        }
        while (i < n) f[i++] = Float.intBitsToFloat(rnd.nextInt()); // anything, subnormals and NaNs included
        return NDArray.wrap(t, shape, f);
    }

    private static NDArray float64Edges(Random rnd, DType t, int[] shape) {
        int n = NDArray.elementCount(t, shape);
        double[] d = new double[n];
        int i = 0;
        for (double s : SPECIALS) {
            d[i++] = s;
            d[i++] = -s;
        }
        // just above a halfway point by less than half a float32 ulp: through float32 with round-to-nearest it
        // would land on the halfway point and round to even (down), the correct rounding is up
        for (double s : new double[] {1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8 + 0x1p-40, 65519.99999, 0x1p-25 + 0x1p-60, 2049.0000001}) {
            d[i++] = s;
            d[i++] = -s;
        }
        for (DType half : new DType[] {DType.FLOAT16, DType.BFLOAT16}) {
            for (double p : gridPoints(rnd, half, n / 3, 0x1p-30)) if (i < n / 3 * (half == DType.FLOAT16 ? 1 : 2) && i < n) d[i++] = p;
        }
        while (i < n) d[i++] = Double.longBitsToDouble(rnd.nextLong());
        return NDArray.wrap(t, shape, d);
    }

    private static NDArray integerEdges(Random rnd, DType t, int[] shape) {
        int n = NDArray.elementCount(t, shape);
        long[] v = new long[n];
        int i = 0;
        for (long s : new long[] {0, 1, 255, 256, 257, 2047, 2048, 2049, 2050, 2051, 4097, 32767, 32768, 65504, 65519, 65520, 65535, 65536,
            (1 << 24) + 1, Integer.MAX_VALUE, Long.MAX_VALUE, 0x8080, 0x8180, 0x10100}) {
            v[i++] = s;
            v[i++] = -s;
        }
        while (i < n) v[i++] = rnd.nextInt(140001) - 70000;
        NDArray wide = NDArray.fromLongs(DType.INT64, shape, v);
        NDArray out = NDArray.zeros(t, shape);
        for (int k = 0; k < n; k++) out.setLong(k, wide.getLong(k)); // wraps to the width
        return out;
    }
}
