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
 * {@code nn.lrn(data, size=5, axis=1, bias=2, alpha=1e-4, beta=0.75)}, TOPI's formula:
 * {@code out = x / (bias + alpha / size * sum(x^2 over the size-window centred on the element along axis))^beta}.
 */
public final class Lrn {
    public static final String NAME = "nn.lrn";

    private Lrn() {}

    public record LrnAttrs(int size, int axis, double bias, double alpha, double beta) {}

    public static OpDef<LrnAttrs> def() {
        return new OpDef<>(NAME, 1, Lrn::parse, Lrn::relation, OpPattern.OPAQUE, (in, a) -> List.of(compute(in.get(0), a)));
    }

    static LrnAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        LrnAttrs a = new LrnAttrs(r.int32("size", 5), r.int32("axis", 1), r.real("bias", 2), r.real("alpha", 1e-4), r.real("beta", 0.75));
        r.finish();
        if (a.size() < 1) throw new RelationException(NAME + ": size must be positive, got " + a.size());
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, LrnAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(NAME, "data", types.get(0));
        if (data == null) return false;
        Rel.axis(NAME, a.axis(), data.rank());
        reporter.assign(types.get(1), data);
        return true;
    }

    static NDArray compute(NDArray x, LrnAttrs a) {
        AxisSplit sp = AxisSplit.of(x.shape(), a.axis(), NAME);
        double[] v = Arrays2.doubles(x);
        double[] out = new double[v.length];
        int mid = sp.mid(), inner = sp.inner(), half = a.size() / 2;
        for (int o = 0; o < sp.outer(); o++) {
            for (int i = 0; i < inner; i++) {
                int base = o * mid * inner + i;
                for (int c = 0; c < mid; c++) {
                    double sq = 0;
                    // TOPI pads size/2 zeros on both sides and sums `size` values from c there: the window is
                    // [c - size/2, c - size/2 + size), which for an even size leans one element to the front.
                    for (int j = c - half; j < c - half + a.size(); j++) {
                        if (j < 0 || j >= mid) continue;
                        double e = v[base + j * inner];
                        sq += e * e;
                    }
                    out[base + c * inner] = v[base + c * inner] / Math.pow(a.bias() + a.alpha() * sq / a.size(), a.beta());
                }
            }
        }
        return Arrays2.fromDoubles(x.dtype(), x.shape(), out);
    }
}
