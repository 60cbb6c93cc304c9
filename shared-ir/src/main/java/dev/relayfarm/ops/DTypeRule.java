package dev.relayfarm.ops;

import dev.relayfarm.ir.DType;

/**
 * Which element types an element-wise operator accepts. Relay itself accepts any dtype and lets
 * lowering fail later; we reject {@code exp(int32)} or {@code bitwise_and(float32)} in the type
 * relation, where the message can name the operator and the dtype.
 */
enum DTypeRule {
    /** Every dtype, bool included. */
    ANY("any tensor"),
    /** float16, bfloat16, float32, float64. */
    FLOAT("a floating-point tensor"),
    /** intN, uintN and bool (bitwise and/or/xor on bool are the logical ones). */
    INTEGER_OR_BOOL("an integer or bool tensor"),
    /** intN and uintN only (shifts and bitwise_not make no sense on bool). */
    INTEGER("an integer tensor");

    private final String description;

    DTypeRule(String description) {
        this.description = description;
    }

    boolean accepts(DType t) {
        return switch (this) {
            case ANY -> true;
            case FLOAT -> t.isFloat();
            case INTEGER_OR_BOOL -> t.isInteger() || t.isBool();
            case INTEGER -> t.isInteger();
        };
    }

    /** The complaint about {@code t} for operator {@code op}, e.g. "exp: expects a floating-point tensor, got int32". */
    String complaint(String op, DType t) {
        return op + ": expects " + description + ", got " + t;
    }
}
