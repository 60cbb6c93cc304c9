package dev.relayfarm.kernel.te;

import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Producer;
import dev.relayfarm.kernel.expr.TensorLoad;
import java.util.Arrays;
import java.util.List;

/**
 * A tensor of the tensor-expression layer: a kernel input ({@link Placeholder}) or the result of a
 * {@link Compute}. Tensors are compared by identity of their {@code id}, names are for printing.
 */
public sealed interface Tensor extends Producer permits Placeholder, Compute {
    /** {@code this(indices...)} inside a compute body. */
    default TensorLoad at(PrimExpr... indices) {
        return new TensorLoad(this, Arrays.asList(indices));
    }

    default TensorLoad at(List<? extends PrimExpr> indices) {
        return new TensorLoad(this, List.copyOf(indices));
    }

    default int rank() {
        return shape().size();
    }
}
