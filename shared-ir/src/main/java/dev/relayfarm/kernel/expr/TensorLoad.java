package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;
import java.util.List;

/**
 * Reads element {@code indices} of a tensor-expression tensor ({@link Producer}). Only in compute bodies: lowering
 * replaces it by a {@link Load} of the buffer chosen for the tensor (or by the tensor's body when it is
 * inlined), so the loop IR never contains one.
 */
public record TensorLoad(Producer tensor, List<PrimExpr> indices) implements PrimExpr {
    public TensorLoad {
        indices = List.copyOf(indices);
        if (indices.size() != tensor.shape().size()) {
            throw new IllegalArgumentException("tensor " + tensor.name() + " has rank " + tensor.shape().size() + ", indexed with " + indices.size() + " indices");
        }
    }

    @Override
    public DType dtype() {
        return tensor.dtype();
    }
}
