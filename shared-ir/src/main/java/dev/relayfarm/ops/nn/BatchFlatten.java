package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/** {@code nn.batch_flatten(data [N, d1, d2, ..])} → {@code [N, d1 * d2 * ..]}. */
public final class BatchFlatten {
    public static final String NAME = "nn.batch_flatten";

    private BatchFlatten() {}

    public static OpDef<NoAttrs> def() {
        return new OpDef<>(NAME, 1, a -> NoAttrs.parse(NAME, a), BatchFlatten::relation, OpPattern.INJECTIVE, BatchFlatten::compute);
    }

    static boolean relation(List<Type> types, int numInputs, NoAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(NAME, "data", types.get(0));
        if (data == null) return false;
        if (data.rank() < 1) throw new RelationException(NAME + ": data must have rank >= 1, got " + data);
        Dim rest = Dims.product(data.shape().subList(1, data.rank()));
        reporter.assign(types.get(1), new TensorType(List.of(data.shape().getFirst(), rest), data.dtype()));
        return true;
    }

    static List<NDArray> compute(List<NDArray> inputs, NoAttrs a) {
        NDArray x = inputs.getFirst();
        int n = x.dim(0);
        int rest = 1;
        for (int i = 1; i < x.rank(); i++) rest *= x.dim(i);
        // Row-major data is already flat: share the (immutable) storage under the new shape.
        return List.of(NDArray.wrap(x.dtype(), new int[] {n, rest}, x.data()));
    }
}
