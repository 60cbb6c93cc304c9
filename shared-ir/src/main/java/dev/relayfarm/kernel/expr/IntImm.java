package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;

/** An integer (or bool: 0/1) constant. */
public record IntImm(long value, DType dtype) implements PrimExpr {
    public IntImm {
        if (dtype.code() != DType.Code.INT && dtype.code() != DType.Code.UINT && dtype.code() != DType.Code.BOOL) {
            throw new IllegalArgumentException("IntImm needs an integer or bool dtype, got " + dtype);
        }
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
