package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;

/**
 * {@code condition ? then : otherwise}. Only the chosen side is evaluated (as in C), so a guarded
 * out-of-range load (the padding of a convolution) is safe.
 */
public record Select(PrimExpr condition, PrimExpr then, PrimExpr otherwise) implements PrimExpr {
    public Select {
        if (!then.dtype().equals(otherwise.dtype())) {
            throw new IllegalArgumentException("select branches differ in dtype: " + then.dtype() + " vs " + otherwise.dtype());
        }
    }

    @Override
    public DType dtype() {
        return then.dtype();
    }
}
