package dev.relayfarm.ir;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A tensor element type as TVM spells it: {@code float32}, {@code int8}, {@code uint64}, {@code bool},
 * {@code float16}, {@code bfloat16}, optionally with SIMD lanes ({@code float32x4}); the low-bit types
 * {@code int4}, {@code uint4}, {@code int2}, {@code uint2} and the 8/4-bit floats
 * {@code float8_e4m3fn}, {@code float8_e4m3fnuz}, {@code float8_e5m2}, {@code float8_e5m2fnuz},
 * {@code float8_e8m0fnu}, {@code float4_e2m1fn} (ml_dtypes' names; see {@link MiniFloats}), scalar
 * only. Every numeric type we store takes at least one byte per element: a 4- or 2-bit value lives in
 * a byte. And {@code string} (ONNX's string element: UTF-8 text of any length, one lane, no bit width;
 * only the interpreter computes on it).
 */
public record DType(Code code, int bits, int lanes) {
    public enum Code {
        INT, UINT, FLOAT, BFLOAT, BOOL, STRING,
        FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT4_E2M1FN;

        /** Whether this is one of the 8- or 4-bit float formats ({@link MiniFloats}); they come last. */
        public boolean isMiniFloat() {
            return ordinal() >= FLOAT8_E4M3FN.ordinal();
        }

        /** The name of a mini-float code ({@code float8_e4m3fn}); its bit count is part of it. */
        String miniName() {
            return name().toLowerCase();
        }
    }

    public static final DType FLOAT16 = new DType(Code.FLOAT, 16, 1);
    public static final DType FLOAT32 = new DType(Code.FLOAT, 32, 1);
    public static final DType FLOAT64 = new DType(Code.FLOAT, 64, 1);
    public static final DType BFLOAT16 = new DType(Code.BFLOAT, 16, 1);
    public static final DType INT8 = new DType(Code.INT, 8, 1);
    public static final DType INT16 = new DType(Code.INT, 16, 1);
    public static final DType INT32 = new DType(Code.INT, 32, 1);
    public static final DType INT64 = new DType(Code.INT, 64, 1);
    public static final DType UINT8 = new DType(Code.UINT, 8, 1);
    public static final DType UINT16 = new DType(Code.UINT, 16, 1);
    public static final DType UINT32 = new DType(Code.UINT, 32, 1);
    public static final DType UINT64 = new DType(Code.UINT, 64, 1);
    public static final DType BOOL = new DType(Code.BOOL, 1, 1);
    public static final DType INT4 = new DType(Code.INT, 4, 1);
    public static final DType UINT4 = new DType(Code.UINT, 4, 1);
    public static final DType INT2 = new DType(Code.INT, 2, 1);
    public static final DType UINT2 = new DType(Code.UINT, 2, 1);
    public static final DType FLOAT8_E4M3FN = new DType(Code.FLOAT8_E4M3FN, 8, 1);
    public static final DType FLOAT8_E4M3FNUZ = new DType(Code.FLOAT8_E4M3FNUZ, 8, 1);
    public static final DType FLOAT8_E5M2 = new DType(Code.FLOAT8_E5M2, 8, 1);
    public static final DType FLOAT8_E5M2FNUZ = new DType(Code.FLOAT8_E5M2FNUZ, 8, 1);
    public static final DType FLOAT8_E8M0FNU = new DType(Code.FLOAT8_E8M0FNU, 8, 1);
    public static final DType FLOAT4_E2M1FN = new DType(Code.FLOAT4_E2M1FN, 4, 1);
    /** Text elements (held as Java strings, serialized as UTF-8); bits is 0 since an element has no fixed width. */
    public static final DType STRING = new DType(Code.STRING, 0, 1);

    private static final Pattern SYNTAX = Pattern.compile("(int|uint|float|bfloat)(2|4|8|16|32|64)(?:x(\\d+))?|bool(?:x(\\d+))?"
            + "|(float8_e4m3fn|float8_e4m3fnuz|float8_e5m2|float8_e5m2fnuz|float8_e8m0fnu|float4_e2m1fn)");

    public DType {
        if (lanes < 1) throw new IllegalArgumentException("lanes must be >= 1, got " + lanes);
        switch (code) {
            case BOOL -> { if (bits != 1) throw new IllegalArgumentException("bool has 1 bit, got " + bits); }
            case FLOAT -> { if (bits != 16 && bits != 32 && bits != 64) throw new IllegalArgumentException("float" + bits + " is not supported"); }
            case BFLOAT -> { if (bits != 16) throw new IllegalArgumentException("bfloat" + bits + " is not supported"); }
            case STRING -> { if (bits != 0 || lanes != 1) throw new IllegalArgumentException("string has no bit width or lanes"); }
            case INT, UINT -> {
                if (bits != 2 && bits != 4 && bits != 8 && bits != 16 && bits != 32 && bits != 64) throw new IllegalArgumentException(code.name().toLowerCase() + bits + " is not supported");
                if (bits < 8 && lanes != 1) throw new IllegalArgumentException(code.name().toLowerCase() + bits + " has no vector form");
            }
            default -> { // the mini floats
                int expected = code == Code.FLOAT4_E2M1FN ? 4 : 8;
                if (bits != expected) throw new IllegalArgumentException(code.miniName() + " has " + expected + " bits, got " + bits);
                if (lanes != 1) throw new IllegalArgumentException(code.miniName() + " has no vector form");
            }
        }
    }

    /** True when {@code text} names a dtype; used by the parser to tell dtypes from identifiers. */
    public static boolean isDType(String text) {
        if (text.equals("string")) return true;
        if (!SYNTAX.matcher(text).matches()) return false;
        try {
            parse(text);
            return true;
        } catch (IllegalArgumentException e) {
            return false; // e.g. float8: the right shape of name, but no such type
        }
    }

    /** Parses a dtype name; throws IllegalArgumentException naming the text when it is not one. */
    public static DType parse(String text) {
        if (text.equals("string")) return STRING;
        Matcher m = SYNTAX.matcher(text);
        if (!m.matches()) throw new IllegalArgumentException("unknown dtype '" + text + "'");
        if (m.group(5) != null) {
            Code code = Code.valueOf(m.group(5).toUpperCase());
            return new DType(code, code == Code.FLOAT4_E2M1FN ? 4 : 8, 1);
        }
        if (m.group(1) == null) {
            return new DType(Code.BOOL, 1, m.group(4) == null ? 1 : Integer.parseInt(m.group(4)));
        }
        Code code = Code.valueOf(m.group(1).toUpperCase());
        int lanes = m.group(3) == null ? 1 : Integer.parseInt(m.group(3));
        return new DType(code, Integer.parseInt(m.group(2)), lanes);
    }

    public DType withLanes(int newLanes) {
        return new DType(code, bits, newLanes);
    }

    /** The scalar element type (lanes = 1). */
    public DType element() {
        return withLanes(1);
    }

    /** float16/32/64, bfloat16 and the 8/4-bit floats (which compute widened to float32, as float16 does). */
    public boolean isFloat() {
        return code == Code.FLOAT || code == Code.BFLOAT || code.isMiniFloat();
    }

    /** One of the 8- or 4-bit float formats ({@link MiniFloats}). */
    public boolean isMiniFloat() {
        return code.isMiniFloat();
    }

    /** int4/uint4/int2/uint2 and the 8/4-bit floats: the types held one per byte in storage but narrower in value. */
    public boolean isLowBit() {
        return code.isMiniFloat() || (code == Code.INT || code == Code.UINT) && bits < 8;
    }

    public boolean isInteger() {
        return code == Code.INT || code == Code.UINT;
    }

    public boolean isBool() {
        return code == Code.BOOL;
    }

    public boolean isString() {
        return code == Code.STRING;
    }

    /**
     * Bytes one lane occupies in memory (bool and the 4- and 2-bit types take a byte). A string counts as 8,
     * its reference: an estimate for budgets and limits only, since its text has no fixed size (compiled
     * artifacts refuse strings).
     */
    public int storageBytes() {
        if (code == Code.STRING) return 8;
        return bits < 8 ? 1 : bits / 8;
    }

    @Override
    public String toString() {
        if (code == Code.STRING) return "string";
        String base = code == Code.BOOL ? "bool" : code.isMiniFloat() ? code.miniName() : code.name().toLowerCase() + bits;
        return lanes == 1 ? base : base + "x" + lanes;
    }
}
