package dev.relayfarm.kernel.expr;

import dev.relayfarm.ir.DType;
import java.util.List;

/**
 * What a {@link TensorLoad} reads, seen from the expression layer: a tensor of the tensor-expression layer
 * ({@code kernel/te}), named by its identity. The expression layer sits below the tensor-expression layer that builds
 * on it, so it knows tensors only through this interface (TVM's {@code tir::DataProducer} plays the same part).
 */
public interface Producer {
    String name();

    List<Integer> shape();

    DType dtype();

    /** Identity: two loads read the same tensor exactly when their ids are equal. */
    long id();
}
