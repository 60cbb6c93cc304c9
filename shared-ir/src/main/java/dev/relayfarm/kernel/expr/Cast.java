package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.MiniFloats;

/**
 * Converts {@code value} to {@code dtype} with C's conversion rules; to an 8/4-bit float it rounds
 * as {@link MiniFloats#encode} does, {@code saturate} clamping overflow to the largest finite value
 * and {@code roundMode} choosing float8_e8m0fnu's rounding (both ignored for other targets).
 */
public record Cast(DType dtype, PrimExpr value, boolean saturate, MiniFloats.RoundMode roundMode) implements PrimExpr {
    public Cast {
        java.util.Objects.requireNonNull(roundMode, "roundMode");
    }

    /** A plain conversion (no saturation; e8m0 rounds up). */
    public Cast(DType dtype, PrimExpr value) {
        this(dtype, value, false, MiniFloats.RoundMode.UP);
    }

    /** This cast's mode over another value. */
    public Cast withValue(PrimExpr v) {
        return new Cast(dtype, v, saturate, roundMode);
    }
}
