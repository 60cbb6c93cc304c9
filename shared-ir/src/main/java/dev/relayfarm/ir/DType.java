package dev.relayfarm.ir;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A tensor element type as TVM spells it: {@code float32}, {@code int8}, {@code uint64}, {@code bool},
 * {@code float16}, {@code bfloat16}, optionally with SIMD lanes ({@code float32x4}); and {@code string} (ONNX's
 * string element: UTF-8 text of any length, one lane, no bit width; only the interpreter computes on it).
 */
public record DType(Code code, int bits, int lanes) {
    public enum Code { INT, UINT, FLOAT, BFLOAT, BOOL, STRING }

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
    /** Text elements (held as Java strings, serialized as UTF-8); bits is 0 since an element has no fixed width. */
    public static final DType STRING = new DType(Code.STRING, 0, 1);

    private static final Pattern SYNTAX = Pattern.compile("(int|uint|float|bfloat)(8|16|32|64)(?:x(\\d+))?|bool(?:x(\\d+))?");

    public DType {
        if (lanes < 1) throw new IllegalArgumentException("lanes must be >= 1, got " + lanes);
        switch (code) {
            case BOOL -> { if (bits != 1) throw new IllegalArgumentException("bool has 1 bit, got " + bits); }
            case FLOAT -> { if (bits != 16 && bits != 32 && bits != 64) throw new IllegalArgumentException("float" + bits + " is not supported"); }
            case BFLOAT -> { if (bits != 16) throw new IllegalArgumentException("bfloat" + bits + " is not supported"); }
            case STRING -> { if (bits != 0 || lanes != 1) throw new IllegalArgumentException("string has no bit width or lanes"); }
            case INT, UINT -> { if (bits != 8 && bits != 16 && bits != 32 && bits != 64) throw new IllegalArgumentException(code.name().toLowerCase() + bits + " is not supported"); }
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

    public boolean isFloat() {
        return code == Code.FLOAT || code == Code.BFLOAT;
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
     * Bytes one lane occupies in memory (bool takes a byte). A string counts as 8, its reference: an estimate for
     * budgets and limits only, since its text has no fixed size (compiled artifacts refuse strings).
     */
    public int storageBytes() {
        if (code == Code.STRING) return 8;
        return code == Code.BOOL ? 1 : bits / 8;
    }

    @Override
    public String toString() {
        if (code == Code.STRING) return "string";
        String base = code == Code.BOOL ? "bool" : code.name().toLowerCase() + bits;
        return lanes == 1 ? base : base + "x" + lanes;
    }
}
