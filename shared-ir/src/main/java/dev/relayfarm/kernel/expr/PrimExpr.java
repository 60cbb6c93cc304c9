package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;

/**
 * A scalar expression of the kernel IR: index arithmetic and element computations alike. Nodes are
 * immutable records; a {@link Var} has identity (a unique id), so two loop variables that print the
 * same are never confused. Tensor-expression bodies and loop-level statements share this one type.
 */
public sealed interface PrimExpr permits IntImm, FloatImm, Var, Load, TensorLoad, Binary, Unary, Cast, BitCast, Select, Call, Reduce {
    DType dtype();

    static IntImm of(long value) {
        return new IntImm(value, DType.INT64);
    }

    static FloatImm of(float value) {
        return new FloatImm(value, DType.FLOAT32);
    }

    default PrimExpr add(PrimExpr o) { return new Binary(BinaryOp.ADD, this, o); }
    default PrimExpr add(long c) { return add(of(c)); }
    default PrimExpr sub(PrimExpr o) { return new Binary(BinaryOp.SUB, this, o); }
    default PrimExpr sub(long c) { return sub(of(c)); }
    default PrimExpr mul(PrimExpr o) { return new Binary(BinaryOp.MUL, this, o); }
    default PrimExpr mul(long c) { return mul(of(c)); }
    default PrimExpr div(PrimExpr o) { return new Binary(BinaryOp.DIV, this, o); }
    default PrimExpr div(long c) { return div(of(c)); }
    default PrimExpr mod(PrimExpr o) { return new Binary(BinaryOp.MOD, this, o); }
    default PrimExpr mod(long c) { return mod(of(c)); }
    default PrimExpr min(PrimExpr o) { return new Binary(BinaryOp.MIN, this, o); }
    default PrimExpr max(PrimExpr o) { return new Binary(BinaryOp.MAX, this, o); }
    default PrimExpr lt(PrimExpr o) { return new Binary(BinaryOp.LT, this, o); }
    default PrimExpr lt(long c) { return lt(of(c)); }
    default PrimExpr le(PrimExpr o) { return new Binary(BinaryOp.LE, this, o); }
    default PrimExpr ge(PrimExpr o) { return new Binary(BinaryOp.GE, this, o); }
    default PrimExpr ge(long c) { return ge(of(c)); }
    default PrimExpr gt(PrimExpr o) { return new Binary(BinaryOp.GT, this, o); }
    default PrimExpr eq(PrimExpr o) { return new Binary(BinaryOp.EQ, this, o); }
    default PrimExpr ne(PrimExpr o) { return new Binary(BinaryOp.NE, this, o); }
    default PrimExpr and(PrimExpr o) { return new Binary(BinaryOp.AND, this, o); }
    default PrimExpr or(PrimExpr o) { return new Binary(BinaryOp.OR, this, o); }
}
