package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import java.util.List;

/** {@code copy(data)}: a fresh tensor with the same type and contents (ELEMWISE, as in TVM). */
public final class Copy {
    private Copy() {}

    public static final OpDef<NoAttrs> DEF = new OpDef<>(
            "copy", 1, a -> NoAttrs.parse("copy", a), (types, n, a, reporter) -> {
                TensorType data = Args.tensor("copy", types, 0, "data");
                if (data == null) return false;
                reporter.assign(types.get(1), data);
                return true;
            }, OpPattern.ELEMWISE, (in, a) -> {
                NDArray x = in.getFirst();
                NDArray out = Movement.allocate(x.dtype(), x.shape());
                Movement.copyElements(x, 0, out, 0, x.size());
                return List.of(out);
            });
}
