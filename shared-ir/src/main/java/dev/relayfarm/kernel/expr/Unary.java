package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;

/** {@code -a}, {@code !a} or {@code ~a}. */
public record Unary(UnaryOp op, PrimExpr a) implements PrimExpr {
    @Override
    public DType dtype() {
        return op == UnaryOp.NOT ? DType.BOOL : a.dtype();
    }
}
