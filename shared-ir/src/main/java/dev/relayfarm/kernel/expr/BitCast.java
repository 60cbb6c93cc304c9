package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;

/**
 * The bits of {@code value} read as {@code dtype}, of the same storage width (Relay's {@code reinterpret}):
 * float32 1.0 is int32 1065353216. A float16/bfloat16 value stands for its 16 storage bits; bool is one byte.
 */
public record BitCast(DType dtype, PrimExpr value) implements PrimExpr {
    public BitCast {
        if (dtype.lanes() != 1 || value.dtype().lanes() != 1 || dtype.storageBytes() != value.dtype().storageBytes()) {
            throw new IllegalArgumentException("bit cast from " + value.dtype() + " to " + dtype + ": the widths differ");
        }
    }
}
