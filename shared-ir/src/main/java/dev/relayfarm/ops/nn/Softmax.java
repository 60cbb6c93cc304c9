package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * {@code nn.softmax(data, axis=-1)} and {@code nn.log_softmax(data, axis=-1)}. Computed in double
 * after subtracting the maximum (no overflow for large logits), rounded once to the dtype.
 */
public final class Softmax {
    private Softmax() {}

    public record SoftmaxAttrs(int axis) {}

    public static OpDef<SoftmaxAttrs> softmax() {
        return def("nn.softmax", false);
    }

    public static OpDef<SoftmaxAttrs> logSoftmax() {
        return def("nn.log_softmax", true);
    }

    private static OpDef<SoftmaxAttrs> def(String name, boolean log) {
        return new OpDef<>(name, 1, attrs -> {
            AttrReader r = new AttrReader(name, attrs);
            SoftmaxAttrs a = new SoftmaxAttrs(r.int32("axis", -1));
            r.finish();
            return a;
        }, (types, n, a, rep) -> relation(name, types, a, rep), OpPattern.OPAQUE, (in, a) -> List.of(compute(name, in.get(0), a.axis(), log)));
    }

    static boolean relation(String op, List<Type> types, SoftmaxAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(op, "data", types.get(0));
        if (data == null) return false;
        if (!data.dtype().isFloat()) throw new RelationException(op + ": data must be a float tensor, got " + data);
        Rel.axis(op, a.axis(), data.rank());
        reporter.assign(types.get(1), data);
        return true;
    }

    static NDArray compute(String op, NDArray x, int axis, boolean log) {
        AxisSplit sp = AxisSplit.of(x.shape(), axis, op);
        double[] v = Arrays2.doubles(x);
        int mid = sp.mid(), inner = sp.inner();
        for (int o = 0; o < sp.outer(); o++) {
            for (int i = 0; i < inner; i++) {
                int base = o * mid * inner + i;
                double max = Double.NEGATIVE_INFINITY;
                for (int c = 0; c < mid; c++) max = Math.max(max, v[base + c * inner]);
                double sum = 0;
                for (int c = 0; c < mid; c++) sum += Math.exp(v[base + c * inner] - max);
                if (log) {
                    double lse = max + Math.log(sum);
                    for (int c = 0; c < mid; c++) v[base + c * inner] -= lse;
                } else {
                    for (int c = 0; c < mid; c++) v[base + c * inner] = Math.exp(v[base + c * inner] - max) / sum;
                }
            }
        }
        return Arrays2.fromDoubles(x.dtype(), x.shape(), v);
    }
}
