package dev.relayfarm.ir;

/**
 * The 8- and 4-bit float formats ({@code float8_e4m3fn}, {@code float8_e4m3fnuz}, {@code float8_e5m2},
 * {@code float8_e5m2fnuz}, {@code float8_e8m0fnu}, {@code float4_e2m1fn}, spelled as ml_dtypes and TVM
 * do): their parameters and conversions, shared by {@link NDArray} storage (one byte per element,
 * the code in the low bits) and the C emitter, whose helpers ({@code CEmitter.MINI_PRELUDE}) mirror
 * these bit for bit.
 *
 * <p>Encoding rounds once, to nearest even, from a double (so a float32 or float16 source is rounded
 * directly, never twice). Special values follow ONNX's reference (ml_dtypes):
 * <ul>
 *   <li>{@code e4m3fn}: no infinity, NaN is {@code S.1111.111} ({@code 0x7f}/{@code 0xff}, the sign
 *       kept), max 448;
 *   <li>{@code e4m3fnuz}, {@code e5m2fnuz}: no infinity, no negative zero (a negative value rounding
 *       to zero gives {@code 0x00}), the one NaN is {@code 0x80}; max 240 and 57344;
 *   <li>{@code e5m2}: IEEE-like, infinities {@code 0x7c}/{@code 0xfc}, NaN {@code 0x7e} (sign kept),
 *       max 57344;
 *   <li>{@code e2m1fn} (float4): neither infinity nor NaN, max 6; it always saturates (overflow and
 *       infinities give ±6) and NaN gives {@code 0x8} (negative zero), as ONNX's test data has it;
 *   <li>{@code e8m0fnu}: an unsigned power of two {@code 2^(code-127)}, codes 0..254, NaN
 *       {@code 0xff}; no zero and no sign (the magnitude is encoded). Encoding rounds by
 *       {@link RoundMode} rather than to nearest even.
 * </ul>
 * Without saturation a finite value whose rounding exceeds the largest finite one overflows (to
 * infinity for e5m2, to NaN for the others, for e8m0 to {@code 0xff}) and infinities map to infinity
 * or NaN likewise; with saturation (ONNX Cast's default for float8) finite overflow and infinities
 * give ± the largest finite value. NaN stays NaN either way.
 */
public final class MiniFloats {
    private MiniFloats() {}

    /** How a value rounds to {@code float8_e8m0fnu}, a power of two: ONNX Cast's {@code round_mode}. */
    public enum RoundMode {
        /** The smallest power of two at least |x| (ONNX's default). */
        UP,
        /** The largest power of two at most |x|. */
        DOWN,
        /** The nearer power of two, measured linearly: |x| >= 1.5 * 2^e rounds up (ties up). */
        NEAREST;

        public static RoundMode parse(String s) {
            return switch (s) {
                case "up" -> UP;
                case "down" -> DOWN;
                case "nearest" -> NEAREST;
                default -> throw new IllegalArgumentException("unknown round_mode '" + s + "' (up, down or nearest)");
            };
        }

        public String spelling() {
            return name().toLowerCase();
        }
    }

    /**
     * One format: {@code exponentBits}, {@code mantissaBits}, {@code bias}; whether it has infinities,
     * whether NaN is the unsigned-zero-negative code {@code 0x80} (the FNUZ formats), and its largest
     * finite value.
     */
    public enum Format {
        E4M3FN(DType.Code.FLOAT8_E4M3FN, 4, 3, 7, 448.0),
        E4M3FNUZ(DType.Code.FLOAT8_E4M3FNUZ, 4, 3, 8, 240.0),
        E5M2(DType.Code.FLOAT8_E5M2, 5, 2, 15, 57344.0),
        E5M2FNUZ(DType.Code.FLOAT8_E5M2FNUZ, 5, 2, 16, 57344.0),
        E8M0FNU(DType.Code.FLOAT8_E8M0FNU, 8, 0, 127, 0x1p127),
        E2M1FN(DType.Code.FLOAT4_E2M1FN, 2, 1, 1, 6.0);

        public final DType.Code code;
        public final int exponentBits, mantissaBits, bias;
        public final double maxFinite;

        Format(DType.Code code, int exponentBits, int mantissaBits, int bias, double maxFinite) {
            this.code = code;
            this.exponentBits = exponentBits;
            this.mantissaBits = mantissaBits;
            this.bias = bias;
            this.maxFinite = maxFinite;
        }

        /** Total bits (8, or 4 for float4). */
        public int bits() {
            return this == E8M0FNU ? 8 : 1 + exponentBits + mantissaBits;
        }

        public boolean hasInfinity() {
            return this == E5M2;
        }

        /** The FNUZ formats: no negative zero, NaN is {@code 0x80}. */
        public boolean unsignedZero() {
            return this == E4M3FNUZ || this == E5M2FNUZ;
        }

        /** The C helper name fragment ({@code rf_f8e4m3fn_...}). */
        public String cName() {
            return name().toLowerCase();
        }
    }

    /** The format of a minifloat dtype; throws for any other dtype. */
    public static Format format(DType t) {
        for (Format f : Format.values()) if (f.code == t.code()) return f;
        throw new IllegalArgumentException(t + " is not an 8- or 4-bit float");
    }

    /** Whether {@code t} is a scalar 8- or 4-bit float. */
    public static boolean isMini(DType t) {
        return t.lanes() == 1 && t.isMiniFloat();
    }

    private static final double NEGATIVE_NAN = Double.longBitsToDouble(0xfff8000000000000L);

    /**
     * The value of {@code code} (its low {@link Format#bits()} bits) as a double; exact. A NaN is the
     * quiet NaN with the code's sign (e4m3fn and e5m2 keep it, so decoding and encoding again gives the
     * same code), positive for the FNUZ formats and e8m0.
     */
    public static double decode(Format f, int code) {
        code &= f == Format.E2M1FN ? 0xf : 0xff;
        if (f == Format.E8M0FNU) return code == 0xff ? Double.NaN : Math.scalb(1.0, code - 127);
        int signBit = 1 << (f.exponentBits + f.mantissaBits);
        int mag = code & (signBit - 1);
        boolean negative = (code & signBit) != 0;
        if (f.unsignedZero() && code == 0x80) return Double.NaN;
        int expField = mag >> f.mantissaBits, man = mag & ((1 << f.mantissaBits) - 1);
        int expMax = (1 << f.exponentBits) - 1;
        if (f == Format.E4M3FN && mag == 0x7f) return negative ? NEGATIVE_NAN : Double.NaN;
        if (f == Format.E5M2 && expField == expMax) {
            return man == 0 ? (negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY) : negative ? NEGATIVE_NAN : Double.NaN;
        }
        double v = expField == 0
                ? Math.scalb((double) man, 1 - f.bias - f.mantissaBits)
                : Math.scalb((double) ((1 << f.mantissaBits) | man), expField - f.bias - f.mantissaBits);
        return negative ? -v : v;
    }

    /** {@code v} encoded, rounded to nearest even (e8m0: {@link RoundMode#UP}), without saturation. */
    public static int encode(Format f, double v) {
        return encode(f, v, false, RoundMode.UP);
    }

    /** {@code v} encoded as the class comment describes; {@code mode} matters for e8m0 only. */
    public static int encode(Format f, double v, boolean saturate, RoundMode mode) {
        if (f == Format.E8M0FNU) return encodeE8M0(v, saturate, mode);
        int signBit = 1 << (f.exponentBits + f.mantissaBits);
        boolean negative = (Double.doubleToRawLongBits(v) < 0);
        int sign = negative ? signBit : 0;
        if (Double.isNaN(v)) {
            return switch (f) {
                case E4M3FN -> sign | 0x7f;
                case E5M2 -> sign | 0x7e;
                case E2M1FN -> 0x8;
                default -> 0x80;
            };
        }
        double a = Math.abs(v);
        boolean clamp = saturate || f == Format.E2M1FN;
        if (a > f.maxFinite && clamp) a = f.maxFinite;
        int minExp = 1 - f.bias;
        int q = Math.max(Double.isInfinite(a) ? Integer.MAX_VALUE - 64 : Math.getExponent(a), minExp) - f.mantissaBits;
        double r = Double.isInfinite(a) ? a : Math.scalb(Math.rint(Math.scalb(a, -q)), q);
        if (r > f.maxFinite) return overflow(f, sign);
        if (r == 0) return f.unsignedZero() ? 0 : sign;
        int e = Math.getExponent(r);
        int mag;
        if (e < minExp) {
            mag = (int) Math.scalb(r, f.mantissaBits - minExp); // subnormal: units of 2^(minExp - mantissaBits)
        } else {
            int man = (int) Math.scalb(r, f.mantissaBits - e) - (1 << f.mantissaBits);
            mag = ((e + f.bias) << f.mantissaBits) | man;
        }
        return sign | mag;
    }

    private static int overflow(Format f, int sign) {
        return switch (f) {
            case E5M2 -> sign | 0x7c;
            case E4M3FN -> sign | 0x7f;
            default -> 0x80; // the FNUZ formats; e2m1 always clamps first
        };
    }

    private static int encodeE8M0(double v, boolean saturate, RoundMode mode) {
        if (Double.isNaN(v)) return 0xff;
        double a = Math.abs(v);
        if (Double.isInfinite(a)) return saturate ? 0xfe : 0xff;
        if (a < 0x1p-127) return 0; // zero and everything below the smallest power (also double subnormals)
        int e = Math.getExponent(a);
        boolean exact = a == Math.scalb(1.0, e);
        int k = exact ? e : switch (mode) {
            case UP -> e + 1;
            case DOWN -> e;
            case NEAREST -> a >= Math.scalb(1.5, e) ? e + 1 : e;
        };
        if (k > 127) return saturate ? 0xfe : 0xff;
        return Math.max(k, -127) + 127;
    }

    /** {@code v} rounded to {@code f} (no saturation) and back, as a double. */
    public static double round(Format f, double v) {
        return decode(f, encode(f, v));
    }
}
