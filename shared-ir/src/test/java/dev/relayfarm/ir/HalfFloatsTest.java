package dev.relayfarm.ir;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** {@link HalfFloats}: float64 values narrow to float16/bfloat16 in one correct rounding. */
class HalfFloatsTest {
    private static double f16(int h) {
        return Float.float16ToFloat((short) h);
    }

    private static double bf16(int h) {
        return Float.intBitsToFloat(h << 16);
    }

    /** Around every midpoint between adjacent finite positive values: just below goes down, just above up, on it to even. */
    @Test
    void float64NarrowsToFloat16InOneRounding() {
        for (int h = 0; h < 0x7bff; h++) {
            double lo = f16(h), hi = f16(h + 1), mid = (lo + hi) / 2; // exact in float64
            double tiny = (hi - lo) * 0x1p-30; // far below half a float32 ulp of mid
            assertEquals(h, HalfFloats.toFloat16(mid - tiny) & 0xffff, "below the midpoint above " + lo);
            assertEquals(h + 1, HalfFloats.toFloat16(mid + tiny) & 0xffff, "above the midpoint above " + lo);
            assertEquals((h & 1) == 0 ? h : h + 1, HalfFloats.toFloat16(mid) & 0xffff, "on the midpoint above " + lo);
            assertEquals(h | 0x8000, HalfFloats.toFloat16(-(mid - tiny)) & 0xffff);
        }
        assertEquals(0x7bff, HalfFloats.toFloat16(65519.99999) & 0xffff);
        assertEquals(0x7c00, HalfFloats.toFloat16(65520) & 0xffff);
        assertEquals(0x7c00, HalfFloats.toFloat16(1e300) & 0xffff);
        assertEquals(0x0001, HalfFloats.toFloat16(0x1p-25 + 0x1p-70) & 0xffff);
        assertEquals(0x0000, HalfFloats.toFloat16(0x1p-25) & 0xffff);
    }

    @Test
    void float64NarrowsToBfloat16InOneRounding() {
        for (int h = 0; h < 0x7f7f; h += 7) {
            double lo = bf16(h), hi = bf16(h + 1), mid = (lo + hi) / 2;
            double tiny = (hi - lo) * 0x1p-30;
            assertEquals(h, HalfFloats.toBfloat16(mid - tiny) & 0xffff);
            assertEquals(h + 1, HalfFloats.toBfloat16(mid + tiny) & 0xffff);
            assertEquals((h & 1) == 0 ? h : h + 1, HalfFloats.toBfloat16(mid) & 0xffff);
        }
        assertEquals(0x7fc0, HalfFloats.toBfloat16(Double.NaN) & 0xffff);
        assertEquals(0xff80, HalfFloats.toBfloat16(Double.NEGATIVE_INFINITY) & 0xffff);
    }

    /** A float32 value rounds exactly as Float.floatToFloat16 does (toFloatOdd is exact for it). */
    @Test
    void float32ValuesAgreeWithTheJdk() {
        java.util.Random rnd = new java.util.Random(7);
        for (int i = 0; i < 200_000; i++) {
            float f = Float.intBitsToFloat(rnd.nextInt());
            assertEquals(Float.floatToFloat16(f), HalfFloats.toFloat16(f), () -> Float.toString(f));
        }
    }
}
