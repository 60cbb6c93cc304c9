package dev.relayfarm.ops.algorithm;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.TypeReporter;
import dev.relayfarm.ops.nn.Rel;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code argwhere(condition)} (TVM): the coordinates of the non-zero elements in row-major order,
 * as an int32 tensor {@code [count, rank]}. The count depends on the values, so the type says
 * {@code Any} for it.
 */
public final class ArgWhere {
    private ArgWhere() {}

    public static final OpDef<NoAttrs> DEF = new OpDef<>("argwhere", 1, a -> NoAttrs.parse("argwhere", a), ArgWhere::relation,
            OpPattern.OPAQUE, (in, a) -> List.of(compute(in.getFirst())));

    static boolean relation(List<Type> types, int numInputs, NoAttrs a, TypeReporter reporter) {
        TensorType x = Rel.tensor("argwhere", "condition", types.get(0));
        if (x == null) return false;
        reporter.assign(types.get(1), new TensorType(List.of(Dim.ANY, Dim.of(x.rank())), DType.INT32));
        return true;
    }

    private static NDArray compute(NDArray x) {
        int[] s = x.shape();
        List<Integer> hits = new ArrayList<>();
        for (int i = 0; i < x.elementCount(); i++) if (x.getBoolean(i)) hits.add(i);
        NDArray out = NDArray.zeros(DType.INT32, hits.size(), s.length);
        for (int h = 0; h < hits.size(); h++) {
            int rem = hits.get(h);
            for (int d = s.length - 1; d >= 0; d--) {
                out.setLong(h * s.length + d, rem % s[d]);
                rem /= s[d];
            }
        }
        return out;
    }
}
