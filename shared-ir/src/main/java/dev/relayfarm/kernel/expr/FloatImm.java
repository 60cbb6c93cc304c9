package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;

/** A floating-point constant; {@code -inf}/{@code inf} are allowed (the init of a max reduction). */
public record FloatImm(double value, DType dtype) implements PrimExpr {
    public FloatImm {
        if (!dtype.isFloat()) throw new IllegalArgumentException("FloatImm needs a float dtype, got " + dtype);
    }

    @Override
    public String toString() {
        return Double.toString(value);
    }
}
