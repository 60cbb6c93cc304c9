package dev.relayfarm.ir;

/**
 * Conversions between the 16-bit float formats (IEEE binary16 {@code float16} and {@code bfloat16})
 * and float32/float64, shared by {@link NDArray} storage and the C emitter (whose C helpers in
 * {@code CEmitter.PRELUDE} mirror these bit for bit, so compiled kernels match the interpreter).
 *
 * <p>Rounding is to nearest, ties to even. A float64 value is narrowed in one correct rounding:
 * rounding it first to float32 with round-to-nearest would round twice (a value just above a
 * float16 halfway point can land exactly on it), so the float32 step rounds to odd instead
 * ({@link #toFloatOdd}), which is exact for the final rounding since float32 carries more than
 * two bits beyond float16's and bfloat16's significands. NaN stays NaN (float16 keeps the sign and
 * the high payload bits, quieted, as {@link Float#floatToFloat16} does; bfloat16 gives the
 * canonical {@code 0x7fc0}), infinities stay infinite, and values beyond the largest finite one
 * round to infinity.
 */
public final class HalfFloats {
    private HalfFloats() {}

    /**
     * {@code d} rounded to float32 by round-to-odd: the truncation toward zero, with the lowest
     * significand bit set when inexact. A later round-to-nearest to a format with at least two fewer
     * significand bits then equals the direct rounding of {@code d}.
     */
    public static float toFloatOdd(double d) {
        float f = (float) d;
        if (Double.isNaN(d) || f == d) return f;
        if (Math.abs((double) f) > Math.abs(d)) f = Math.nextAfter(f, 0.0);
        return Float.intBitsToFloat(Float.floatToRawIntBits(f) | 1);
    }

    /** float16 bits of {@code d}, rounded once to nearest even. */
    public static short toFloat16(double d) {
        return Float.floatToFloat16(toFloatOdd(d));
    }

    /** bfloat16 bits of {@code d}, rounded once to nearest even; NaN gives {@code 0x7fc0}. */
    public static short toBfloat16(double d) {
        return floatToBfloat16(toFloatOdd(d));
    }

    /** bfloat16 bits of {@code f}: the high half of its float32 bits, rounded to nearest even. */
    public static short floatToBfloat16(float f) {
        if (Float.isNaN(f)) return (short) 0x7fc0;
        int bits = Float.floatToRawIntBits(f);
        int rounding = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }

    public static float float16ToFloat(short h) {
        return Float.float16ToFloat(h);
    }

    /** The float32 value of bfloat16 bits {@code b}; a NaN comes back quiet (as float16's does), so results do not hinge on how the platform treats signaling NaNs. */
    public static float bfloat16ToFloat(short b) {
        int bits = (b & 0xffff) << 16;
        if ((bits & 0x7f800000) == 0x7f800000 && (bits & 0x7fffff) != 0) bits |= 0x400000;
        return Float.intBitsToFloat(bits);
    }

    /** {@code d} rounded to the 16-bit float {@code dtype} ({@code float16} or {@code bfloat16}), as a float. */
    public static float round(DType dtype, double d) {
        return dtype.code() == DType.Code.BFLOAT ? bfloat16ToFloat(toBfloat16(d)) : float16ToFloat(toFloat16(d));
    }

    /** Whether {@code t} is a scalar 16-bit float ({@code float16} or {@code bfloat16}). */
    public static boolean isHalf(DType t) {
        return t.lanes() == 1 && (t.code() == DType.Code.BFLOAT || t.code() == DType.Code.FLOAT && t.bits() == 16);
    }

    /** Whether {@code t} is stored narrower than float32 and computes widened to it: float16, bfloat16 or an 8/4-bit float ({@link MiniFloats}). */
    public static boolean isNarrow(DType t) {
        return isHalf(t) || MiniFloats.isMini(t);
    }

    /** {@code d} rounded to the narrow float {@code t} (an 8/4-bit float without saturation), as a double. */
    public static double roundNarrow(DType t, double d) {
        return MiniFloats.isMini(t) ? MiniFloats.round(MiniFloats.format(t), d) : round(t, d);
    }
}
