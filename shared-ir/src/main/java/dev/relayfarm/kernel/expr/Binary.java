package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;

/** {@code a op b}; both sides have the same dtype (comparisons yield bool). */
public record Binary(BinaryOp op, PrimExpr a, PrimExpr b) implements PrimExpr {
    public Binary {
        if (!a.dtype().equals(b.dtype()) && !op.isComparison()) {
            throw new IllegalArgumentException("operands of " + op + " differ in dtype: " + a.dtype() + " vs " + b.dtype() + " (insert a Cast)");
        }
    }

    @Override
    public DType dtype() {
        return op.isComparison() ? DType.BOOL : a.dtype();
    }
}
