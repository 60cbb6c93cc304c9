package dev.relayfarm.text;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.math.BigInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Scalar literals as TVM writes them: {@code 1} (int32), {@code 1.5} and {@code 1f} (float32),
 * {@code 2f64}, {@code 1.5f16}, {@code 3i64}, {@code -42i16}, {@code 5u8}, {@code True}. Reading and
 * printing live together so that they stay inverse to each other.
 */
final class Literals {
    private Literals() {}

    private static final Pattern NUMBER =
            Pattern.compile("([0-9]+)(\\.[0-9]+)?([eE][+-]?[0-9]+)?(?:([fiu])([0-9]*))?");

    /** A parsed numeric literal: its dtype and value (an exact integer, or the float value). */
    record Number(DType dtype, BigInteger integer, double real, boolean isFloat) {}

    /** Decodes a NUMBER token; {@code negative} when a unary minus was folded into it. */
    static Number parse(String text, boolean negative) {
        return parse(text, negative, false);
    }

    /**
     * Like {@link #parse(String, boolean)}; with {@code asDouble} (attribute values) an unsuffixed
     * integer may use the whole int64 range, and a float is read at double precision
     * whatever its suffix, because attribute values are doubles and {@code 1e-05f} must read back as
     * the double it was printed from.
     */
    static Number parse(String text, boolean negative, boolean asDouble) {
        Matcher m = NUMBER.matcher(text);
        if (!m.matches()) throw new IllegalArgumentException("malformed number '" + text + "'");
        boolean fractional = m.group(2) != null || m.group(3) != null;
        String kind = m.group(4);
        String bitsText = m.group(5);
        String body = (negative ? "-" : "") + m.group(1) + (m.group(2) == null ? "" : m.group(2)) + (m.group(3) == null ? "" : m.group(3));
        if (kind == null) kind = fractional ? "f" : "i";
        int bits = bitsText == null || bitsText.isEmpty() ? 32 : Integer.parseInt(bitsText);
        // Attribute integers are longs (AttrValue.IntValue) and print without a suffix, so in an
        // attribute an unsuffixed integer has the int64 range, not int32's.
        if (asDouble && m.group(4) == null && !fractional) bits = 64;
        DType dtype;
        try {
            dtype = DType.parse((switch (kind) {
                case "f" -> "float";
                case "i" -> "int";
                default -> "uint";
            }) + bits);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown dtype suffix '" + kind + bitsText + "' on '" + text + "'");
        }
        if (dtype.isFloat()) {
            double v = bits == 32 && !asDouble ? Float.parseFloat(body) : Double.parseDouble(body);
            return new Number(dtype, null, v, true);
        }
        if (fractional) throw new IllegalArgumentException("integer literal '" + text + "' has a fraction or exponent");
        BigInteger v = new BigInteger(body);
        BigInteger min = dtype.code() == DType.Code.UINT ? BigInteger.ZERO : BigInteger.ONE.shiftLeft(bits - 1).negate();
        BigInteger max = dtype.code() == DType.Code.UINT
                ? BigInteger.ONE.shiftLeft(bits).subtract(BigInteger.ONE)
                : BigInteger.ONE.shiftLeft(bits - 1).subtract(BigInteger.ONE);
        if (v.compareTo(min) < 0 || v.compareTo(max) > 0) {
            throw new IllegalArgumentException("literal " + (negative ? "-" : "") + text + " is out of range for " + dtype + " [" + min + ", " + max + "]");
        }
        return new Number(dtype, v, 0, false);
    }

    /** The scalar NDArray for a literal. */
    static NDArray toArray(Number n) {
        if (n.isFloat()) {
            if (n.dtype().equals(DType.FLOAT32)) return NDArray.scalar((float) n.real());
            return NDArray.fromDoubles(n.dtype(), new int[0], new double[] {n.real()});
        }
        return NDArray.fromLongs(n.dtype(), new int[0], new long[] {n.integer().longValue()});
    }

    /**
     * The inline literal for a scalar constant, or null when it has no literal form (bfloat16, vector
     * lanes, infinities and NaN), in which case the printer uses the metadata section.
     */
    static String format(NDArray a) {
        if (a.rank() != 0 || a.dtype().lanes() != 1) return null;
        DType t = a.dtype();
        if (t.isLowBit()) return null; // no literal suffix for int4/int2 or the 8/4-bit floats: metadata
        return switch (t.code()) {
            case BOOL -> a.getLong(0) != 0 ? "True" : "False";
            case INT -> a.getLong(0) + (t.bits() == 32 ? "" : "i" + t.bits());
            case UINT -> (t.bits() == 64 ? Long.toUnsignedString(a.getLong(0)) : Long.toString(a.getLong(0))) + "u" + t.bits();
            case BFLOAT, STRING, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT4_E2M1FN -> null;
            case FLOAT -> {
                double d = a.getDouble(0);
                if (!Double.isFinite(d)) yield null;
                yield switch (t.bits()) {
                    case 32 -> formatReal(Float.toString(a.floatData()[0])) + "f";
                    case 16 -> formatReal(Double.toString(d)) + "f16";
                    default -> formatReal(Double.toString(d)) + "f64";
                };
            }
        };
    }

    /** A float attribute value: always with the {@code f} suffix so that it reads back as a float. */
    static String formatAttrFloat(double d) {
        if (!Double.isFinite(d)) throw new IllegalArgumentException("non-finite attribute value " + d + " has no text form");
        return formatReal(Double.toString(d)) + "f";
    }

    /**
     * Turns Java's shortest round-trip decimal ({@code 1.0}, {@code 1.0E-5}) into TVM's spelling
     * ({@code 1}, {@code 1e-05}) without changing the value it reads back as.
     */
    static String formatReal(String java) {
        String mantissa = java;
        String exponent = null;
        int e = java.indexOf('E');
        if (e >= 0) {
            mantissa = java.substring(0, e);
            exponent = java.substring(e + 1);
        }
        if (mantissa.endsWith(".0")) mantissa = mantissa.substring(0, mantissa.length() - 2);
        if (exponent == null) return mantissa;
        boolean neg = exponent.startsWith("-");
        String digits = neg ? exponent.substring(1) : exponent;
        if (digits.length() < 2) digits = "0" + digits;
        return mantissa + "e" + (neg ? "-" : "+") + digits;
    }
}
