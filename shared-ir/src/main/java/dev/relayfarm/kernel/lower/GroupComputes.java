package dev.relayfarm.kernel.lower;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Type;
import dev.relayfarm.kernel.compute.OpComputes;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.Tensor;
import java.util.List;

/**
 * The compute definitions of non-anchor operators inside a group (element-wise, broadcast, injective
 * epilogues and prologues, pooling and reductions): the op registry's {@link OpComputes}. Anchors with
 * templates are built by {@link Anchors}.
 */
final class GroupComputes {
    private GroupComputes() {}

    /** @throws UnsupportedOperationException naming the op when it has no compute */
    static List<Compute> compute(String op, List<Tensor> inputs, Attrs attrs, Type outType) {
        return OpComputes.compute(op, inputs, attrs, outType);
    }
}
