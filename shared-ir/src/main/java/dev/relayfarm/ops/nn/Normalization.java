package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/**
 * {@code nn.batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True,
 * scale=True)} → {@code (normalized, mean, var)} and {@code nn.layer_norm(data, gamma, beta, axis=-1,
 * epsilon=1e-5, center=True, scale=True)}. batch_norm has inference semantics (the moving statistics
 * normalize and are returned as the 2nd and 3rd fields), which is what TVM computes once
 * SimplifyInference has run. Computed in double, rounded once.
 */
public final class Normalization {
    private Normalization() {}

    public record NormAttrs(int axis, double epsilon, boolean center, boolean scale) {}

    public static OpDef<NormAttrs> batchNorm() {
        return new OpDef<>("nn.batch_norm", 5, a -> parse("nn.batch_norm", a, 1),
                (types, n, a, rep) -> relation("nn.batch_norm", types, a, rep, 4), OpPattern.OPAQUE, Normalization::batchNormCompute);
    }

    public static OpDef<NormAttrs> layerNorm() {
        return new OpDef<>("nn.layer_norm", 3, a -> parse("nn.layer_norm", a, -1),
                (types, n, a, rep) -> relation("nn.layer_norm", types, a, rep, 2), OpPattern.OPAQUE, Normalization::layerNormCompute);
    }

    static NormAttrs parse(String op, Attrs attrs, int defaultAxis) {
        AttrReader r = new AttrReader(op, attrs);
        NormAttrs a = new NormAttrs(r.int32("axis", defaultAxis), r.real("epsilon", 1e-5), r.bool("center", true), r.bool("scale", true));
        r.finish();
        if (!(a.epsilon() >= 0)) throw new RelationException(op + ": epsilon must be non-negative, got " + a.epsilon());
        return a;
    }

    private static final List<String> PARAMS = List.of("gamma", "beta", "moving_mean", "moving_var");

    /** Every parameter input is a vector as long as data's {@code axis}; batch_norm's result is a 3-tuple. */
    static boolean relation(String op, List<Type> types, NormAttrs a, TypeReporter reporter, int params) {
        TensorType data = Rel.tensor(op, "data", types.get(0));
        if (data == null) return false;
        int axis = Rel.axis(op, a.axis(), data.rank());
        TensorType vec = new TensorType(List.of(data.shape().get(axis)), data.dtype());
        for (int i = 1; i <= params; i++) {
            TensorType p = Rel.tensor(op, PARAMS.get(i - 1), types.get(i));
            if (p == null) {
                reporter.assign(types.get(i), vec);
            } else if (p.rank() != 1 || Rel.surelyDiffer(p.shape().get(0), vec.shape().get(0)) || !p.dtype().equals(data.dtype())) {
                throw new RelationException(op + ": " + PARAMS.get(i - 1) + " must be " + vec + " (data " + data + " at axis " + axis
                        + "), got " + p);
            }
        }
        Type out = params == 4 ? new TupleType(List.of(data, vec, vec)) : data;
        reporter.assign(types.get(params + 1), out);
        return true;
    }

    static List<NDArray> batchNormCompute(List<NDArray> in, NormAttrs a) {
        NDArray x = in.get(0);
        AxisSplit sp = AxisSplit.of(x.shape(), a.axis(), "nn.batch_norm");
        double[] gamma = Arrays2.doubles(in.get(1)), beta = Arrays2.doubles(in.get(2));
        double[] mean = Arrays2.doubles(in.get(3)), var = Arrays2.doubles(in.get(4));
        for (double[] p : List.of(gamma, beta, mean, var)) {
            if (p.length != sp.mid()) throw new IllegalArgumentException("nn.batch_norm: parameter of length " + p.length + " for axis of " + sp.mid());
        }
        double[] v = Arrays2.doubles(x);
        for (int o = 0; o < sp.outer(); o++) {
            for (int c = 0; c < sp.mid(); c++) {
                double mul = (a.scale() ? gamma[c] : 1) / Math.sqrt(var[c] + a.epsilon());
                double add = a.center() ? beta[c] : 0;
                int base = (o * sp.mid() + c) * sp.inner();
                for (int i = 0; i < sp.inner(); i++) v[base + i] = (v[base + i] - mean[c]) * mul + add;
            }
        }
        return List.of(Arrays2.fromDoubles(x.dtype(), x.shape(), v), in.get(3), in.get(4));
    }

    static List<NDArray> layerNormCompute(List<NDArray> in, NormAttrs a) {
        NDArray x = in.get(0);
        AxisSplit sp = AxisSplit.of(x.shape(), a.axis(), "nn.layer_norm");
        double[] gamma = Arrays2.doubles(in.get(1)), beta = Arrays2.doubles(in.get(2));
        if (gamma.length != sp.mid() || beta.length != sp.mid()) {
            throw new IllegalArgumentException("nn.layer_norm: gamma/beta must have " + sp.mid() + " values");
        }
        double[] v = Arrays2.doubles(x);
        int mid = sp.mid(), inner = sp.inner();
        for (int o = 0; o < sp.outer(); o++) {
            for (int i = 0; i < inner; i++) {
                int base = o * mid * inner + i;
                double sum = 0;
                for (int c = 0; c < mid; c++) sum += v[base + c * inner];
                double mean = sum / mid, sq = 0;
                for (int c = 0; c < mid; c++) {
                    double d = v[base + c * inner] - mean;
                    sq += d * d;
                }
                double inv = 1 / Math.sqrt(sq / mid + a.epsilon());
                for (int c = 0; c < mid; c++) {
                    double y = (v[base + c * inner] - mean) * inv;
                    if (a.scale()) y *= gamma[c];
                    if (a.center()) y += beta[c];
                    v[base + c * inner] = y;
                }
            }
        }
        return List.of(Arrays2.fromDoubles(x.dtype(), x.shape(), v));
    }
}
