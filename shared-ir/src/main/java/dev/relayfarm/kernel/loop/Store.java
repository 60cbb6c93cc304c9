package dev.relayfarm.kernel.loop;

import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.PrimExpr;
import java.util.List;

/** {@code buffer[indices...] = value}. */
public record Store(Buffer buffer, List<PrimExpr> indices, PrimExpr value) implements Stmt {
    public Store {
        indices = List.copyOf(indices);
        if (indices.size() != buffer.rank()) {
            throw new IllegalArgumentException("store to " + buffer.name() + " needs " + buffer.rank() + " indices, got " + indices.size());
        }
        if (!value.dtype().equals(buffer.dtype())) {
            throw new IllegalArgumentException("store of " + value.dtype() + " into " + buffer.dtype() + " buffer " + buffer.name());
        }
    }
}
