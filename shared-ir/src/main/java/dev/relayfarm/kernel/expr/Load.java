package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;
import java.util.List;

/** Reads {@code buffer[indices...]}. */
public record Load(Buffer buffer, List<PrimExpr> indices) implements PrimExpr {
    public Load {
        indices = List.copyOf(indices);
        if (indices.size() != buffer.rank()) {
            throw new IllegalArgumentException("load of " + buffer.name() + " needs " + buffer.rank() + " indices, got " + indices.size());
        }
    }

    @Override
    public DType dtype() {
        return buffer.dtype();
    }
}
