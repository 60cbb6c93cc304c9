package dev.relayfarm.ops;

import dev.relayfarm.ir.NDArray;
import java.util.List;

/**
 * An operator's reference implementation, run by the interpreter and by constant folding.
 * Arguments of tuple type (the tuple given to {@code concatenate}) arrive flattened, field by field.
 * Returns one array, or one per field when the operator's result is a tuple ({@code split},
 * {@code nn.batch_norm}). Kernels must not modify their inputs.
 *
 * @param <A> the operator's typed attributes record
 */
@FunctionalInterface
public interface Kernel<A> {
    List<NDArray> compute(List<NDArray> inputs, A attrs);
}
