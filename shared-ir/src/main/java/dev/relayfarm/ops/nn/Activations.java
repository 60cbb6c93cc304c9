package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/** {@code nn.relu}, {@code nn.leaky_relu(alpha)} and {@code nn.prelu(data, alpha, axis=1)}. */
public final class Activations {
    private Activations() {}

    /** TVM's LeakyReluAttrs default (0.25), which is what a call without the attribute means in Relay text. */
    public record LeakyReluAttrs(double alpha) {}

    public record PReluAttrs(int axis) {}

    public static OpDef<NoAttrs> relu() {
        return new OpDef<>("nn.relu", 1, a -> NoAttrs.parse("nn.relu", a), (types, n, a, rep) -> identity("nn.relu", types, rep),
                OpPattern.ELEMWISE, (in, a) -> List.of(map(in.get(0), 0.0)));
    }

    public static OpDef<LeakyReluAttrs> leakyRelu() {
        return new OpDef<>("nn.leaky_relu", 1, Activations::parseLeaky, (types, n, a, rep) -> identity("nn.leaky_relu", types, rep),
                OpPattern.ELEMWISE, (in, a) -> List.of(map(in.get(0), a.alpha())));
    }

    public static OpDef<PReluAttrs> prelu() {
        return new OpDef<>("nn.prelu", 2, Activations::parsePrelu, Activations::preluRelation, OpPattern.BROADCAST,
                Activations::preluCompute);
    }

    static LeakyReluAttrs parseLeaky(Attrs attrs) {
        AttrReader r = new AttrReader("nn.leaky_relu", attrs);
        LeakyReluAttrs a = new LeakyReluAttrs(r.real("alpha", 0.25));
        r.finish();
        return a;
    }

    static PReluAttrs parsePrelu(Attrs attrs) {
        AttrReader r = new AttrReader("nn.prelu", attrs);
        PReluAttrs a = new PReluAttrs(r.int32("axis", 1));
        r.finish();
        return a;
    }

    /** The result has the input's type. */
    static boolean identity(String op, List<Type> types, TypeReporter reporter) {
        TensorType data = Rel.tensor(op, "data", types.get(0));
        if (data == null) return false;
        reporter.assign(types.get(types.size() - 1), data);
        return true;
    }

    /** {@code x < 0 ? slope * x : x}; relu is slope 0. */
    static NDArray map(NDArray x, double slope) {
        if (Arrays2.isF32(x)) {
            float[] in = x.floatData();
            float[] out = new float[in.length];
            float s = (float) slope;
            if (s == 0f) for (int i = 0; i < in.length; i++) out[i] = in[i] < 0f ? 0f : in[i];
            else for (int i = 0; i < in.length; i++) out[i] = in[i] < 0f ? s * in[i] : in[i];
            return NDArray.wrap(DType.FLOAT32, x.shape(), out);
        }
        NDArray out = NDArray.zeros(x.dtype(), x.shape());
        int n = x.size();
        if (x.dtype().isFloat()) {
            for (int i = 0; i < n; i++) {
                double v = x.getDouble(i);
                // relu gives +0.0 for a negative input, as the float32 loop does (0 * v would be -0.0)
                out.setDouble(i, v < 0 ? (slope == 0 ? 0.0 : slope * v) : v);
            }
        } else {
            for (int i = 0; i < n; i++) {
                long v = x.getLong(i);
                out.setLong(i, v < 0 ? (long) (slope * v) : v);
            }
        }
        return out;
    }

    static boolean preluRelation(List<Type> types, int numInputs, PReluAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor("nn.prelu", "data", types.get(0));
        if (data == null) return false;
        int axis = Rel.axis("nn.prelu", a.axis(), data.rank());
        TensorType alpha = new TensorType(List.of(data.shape().get(axis)), data.dtype());
        TensorType given = Rel.tensor("nn.prelu", "alpha", types.get(1));
        if (given == null) {
            reporter.assign(types.get(1), alpha);
        } else if (given.rank() != 1 || Rel.surelyDiffer(given.shape().get(0), alpha.shape().get(0))
                || !given.dtype().equals(data.dtype())) {
            throw new RelationException("nn.prelu: alpha must be " + alpha + " (data " + data + " at axis " + axis + "), got " + given);
        }
        reporter.assign(types.get(2), data);
        return true;
    }

    static List<NDArray> preluCompute(List<NDArray> inputs, PReluAttrs a) {
        NDArray x = inputs.get(0);
        double[] alpha = Arrays2.doubles(inputs.get(1));
        AxisSplit sp = AxisSplit.of(x.shape(), a.axis(), "nn.prelu");
        if (alpha.length != sp.mid()) throw new IllegalArgumentException("nn.prelu: alpha has " + alpha.length + " values, data axis has " + sp.mid());
        double[] v = Arrays2.doubles(x);
        for (int o = 0; o < sp.outer(); o++) {
            for (int c = 0; c < sp.mid(); c++) {
                int base = (o * sp.mid() + c) * sp.inner();
                for (int i = 0; i < sp.inner(); i++) if (v[base + i] < 0) v[base + i] *= alpha[c];
            }
        }
        return List.of(Arrays2.fromDoubles(x.dtype(), x.shape(), v));
    }
}
