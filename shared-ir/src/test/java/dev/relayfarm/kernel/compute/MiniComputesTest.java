package dev.relayfarm.kernel.compute;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.MiniFloats;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The 8/4-bit floats and int4/uint4/int2/uint2 in C kernels against the interpreter: casts compared
 * byte for byte — from every code of each format, and to each format from every float16 pattern and
 * from float32/float64 grids around each format's values (halfway points and either side of them,
 * subnormals, the overflow threshold, NaN, ±infinity, ±0), with and without saturation and, for
 * e8m0, in each round mode; integer casts wrapping to 4 and 2 bits; arithmetic on e4m3fn/e5m2
 * rounded per operator.
 */
class MiniComputesTest {
    private static final OpKernelCases CASTS = new OpKernelCases().bitExact();
    private static final OpKernelCases ARITH = new OpKernelCases().exact();
    private static final String[] MINIS = {"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn"};

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        for (String m : MINIS) {
            for (String to : new String[] {"float32", "float64", "float16", "bfloat16", "bool"}) cast(m, 256, to, "", MiniComputesTest::everyCode);
            cast(m, 256, "int32", "", finiteCodes());
            for (String from : new String[] {"float32", "float64"}) {
                // room for every format's codes, midpoints and nudges (about 10,400 values) before the random fill
                for (String attrs : attrVariants(m)) cast(from, 12288, m, attrs, MiniComputesTest::grid);
            }
            for (String attrs : attrVariants(m)) cast("float16", 65536, m, attrs, MiniComputesTest::everyHalf);
            cast("int32", 256, m, "", OpKernelCases.ints(-600, 600));
            for (String other : MINIS) if (!other.equals(m)) cast(m, 256, other, other.startsWith("float8") && !other.contains("e8m0") ? ", saturate=True" : "", MiniComputesTest::everyCode);
        }
        for (String q : new String[] {"int4", "uint4", "int2", "uint2"}) {
            cast("float32", 1024, q, "", OpKernelCases.uniform(-40, 40));
            cast("int32", 1024, q, "", OpKernelCases.ints(-300, 300));
            cast(q, 256, "float32", "", OpKernelCases.ints(-20, 20));
            cast(q, 256, "int8", "", OpKernelCases.ints(-20, 20));
            cast(q, 256, "float8_e4m3fn", "", OpKernelCases.ints(-20, 20));
            ARITH.add("fn (%a: Tensor[(512), " + q + "], %b: Tensor[(512), " + q + "]) { add(%a, %b) }", OpKernelCases.ints(-20, 20), OpKernelCases.ints(-20, 20));
            ARITH.add("fn (%a: Tensor[(16, 32), " + q + "]) { sum(%a, axis=[1]) }", OpKernelCases.ints(-20, 20));
        }
        for (String m : new String[] {"float8_e4m3fn", "float8_e5m2"}) {
            for (String op : new String[] {"add", "multiply", "divide", "less"}) {
                ARITH.add("fn (%a: Tensor[(4096), " + m + "], %b: Tensor[(4096), " + m + "]) { " + op + "(%a, %b) }", MiniComputesTest::randomCodes, MiniComputesTest::randomCodes);
            }
            ARITH.add("fn (%a: Tensor[(16, 16), " + m + "]) { transpose(%a, axes=[1, 0]) }", MiniComputesTest::randomCodes);
            ARITH.add("fn (%c: Tensor[(64), bool], %a: Tensor[(64), " + m + "], %b: Tensor[(64), " + m + "]) { where(%c, %a, %b) }",
                    null, MiniComputesTest::randomCodes, MiniComputesTest::randomCodes);
        }
        CASTS.build();
        ARITH.build();
    }

    private static String[] attrVariants(String mini) {
        if (mini.equals("float8_e8m0fnu")) return new String[] {"", ", saturate=True", ", round_mode=\"down\"", ", round_mode=\"nearest\", saturate=True"};
        if (mini.startsWith("float8")) return new String[] {"", ", saturate=True"};
        return new String[] {""};
    }

    private static void cast(String from, int n, String to, String attrs, OpKernelCases.Gen gen) {
        CASTS.add("fn (%x: Tensor[(" + n + "), " + from + "]) { cast(%x, dtype=\"" + to + "\"" + attrs + ") }", gen);
    }

    @AfterAll
    static void close() {
        CASTS.close();
        ARITH.close();
    }

    @Test
    void castsMatchTheInterpreterBitForBit() {
        CASTS.assertAllMatch(20261127L);
    }

    @Test
    void arithmeticMatchesTheInterpreter() {
        ARITH.assertAllMatch(20261127L);
    }

    private static int codes(DType t) {
        return t.code() == DType.Code.FLOAT4_E2M1FN ? 16 : 256;
    }

    /** Every code of the format in order, repeated to fill the array (float4 has 16). */
    private static NDArray everyCode(Random rnd, DType t, int[] shape) {
        byte[] b = new byte[NDArray.elementCount(t, shape)];
        for (int i = 0; i < b.length; i++) b[i] = (byte) (i % codes(t));
        return NDArray.wrap(t, shape, b);
    }

    /** Every finite code within int32 (C leaves other conversions to int undefined); others replaced by zero. */
    private static OpKernelCases.Gen finiteCodes() {
        return (rnd, t, shape) -> {
            NDArray a = everyCode(rnd, t, shape);
            for (int i = 0; i < a.elementCount(); i++) if (!(Math.abs(a.getDouble(i)) < 0x1p31)) a.byteData()[i] = 0;
            return a;
        };
    }

    private static NDArray randomCodes(Random rnd, DType t, int[] shape) {
        byte[] b = new byte[NDArray.elementCount(t, shape)];
        for (int i = 0; i < b.length; i++) b[i] = (byte) rnd.nextInt(codes(t));
        return NDArray.wrap(t, shape, b);
    }

    private static NDArray everyHalf(Random rnd, DType t, int[] shape) {
        short[] s = new short[NDArray.elementCount(t, shape)];
        for (int i = 0; i < s.length; i++) s[i] = (short) i;
        return NDArray.wrap(t, shape, s);
    }

    /**
     * Around every finite value of every format: the value, the midpoint to the next one and a little
     * either side of it (both signs), then specials and random bit patterns; rounded to float32 when
     * {@code t} is float32 (the midpoints of these narrow formats are exact in it).
     */
    private static NDArray grid(Random rnd, DType t, int[] shape) {
        int n = NDArray.elementCount(t, shape);
        double[] d = new double[n];
        int i = 0;
        double[] specials = {0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1e6, -1e6, 1e-7, -1e-7, 464, 480, 61440,
            0x1p127, 0x1.8p127, 0x1p-127, 0x1p-128, 0x1.8p-127, 1e-45, 1e300, 0x1p-149};
        for (double s : specials) d[i++] = s;
        for (MiniFloats.Format f : MiniFloats.Format.values()) {
            int c = f == MiniFloats.Format.E2M1FN ? 16 : 256;
            for (int code = 0; code + 1 < c; code++) {
                double a = MiniFloats.decode(f, code), b = MiniFloats.decode(f, code + 1);
                if (!Double.isFinite(a) || !Double.isFinite(b) || (code & (c / 2 - 1)) == c / 2 - 1) continue;
                double mid = (a + b) / 2, nudge = Math.abs(b - a) * 0x1p-12;
                for (double v : new double[] {a, mid, mid + nudge, mid - nudge}) {
                    if (i < n) d[i++] = v;
                    if (i < n) d[i++] = -v;
                }
            }
        }
        if (i + 256 > n) throw new IllegalArgumentException("grid needs more than " + n + " values to cover every format");
        while (i < n) d[i++] = t.bits() == 32 ? Float.intBitsToFloat(rnd.nextInt()) : rnd.nextGaussian() * Math.scalb(1.0, rnd.nextInt(40) - 20);
        return NDArray.fromDoubles(t, shape, d);
    }
}
