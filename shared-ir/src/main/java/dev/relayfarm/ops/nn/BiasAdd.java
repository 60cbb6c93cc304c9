package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/** {@code nn.bias_add(data, bias, axis=1)}: adds the 1-D {@code bias} along {@code axis}. */
public final class BiasAdd {
    public static final String NAME = "nn.bias_add";

    private BiasAdd() {}

    public record BiasAddAttrs(int axis) {}

    public static OpDef<BiasAddAttrs> def() {
        return new OpDef<>(NAME, 2, BiasAdd::parse, BiasAdd::relation, OpPattern.BROADCAST, BiasAdd::compute);
    }

    static BiasAddAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        BiasAddAttrs a = new BiasAddAttrs(r.int32("axis", 1));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, BiasAddAttrs a, TypeReporter reporter) {
        TensorType data = Rel.tensor(NAME, "data", types.get(0));
        if (data == null) return false;
        int axis = Rel.axis(NAME, a.axis(), data.rank());
        TensorType expected = new TensorType(List.of(data.shape().get(axis)), data.dtype());
        TensorType bias = Rel.tensor(NAME, "bias", types.get(1));
        if (bias == null) {
            reporter.assign(types.get(1), expected);
        } else if (bias.rank() != 1 || !sameLength(bias.shape().get(0), data.shape().get(axis)) || !bias.dtype().equals(data.dtype())) {
            throw new RelationException(NAME + ": bias must be " + expected + " to match data " + data + " at axis " + axis
                    + ", got " + bias);
        }
        reporter.assign(types.get(2), data);
        return true;
    }

    /**
     * The bias covers the axis exactly: equal sizes, provably equal symbols, or {@code ?} on either side. A symbol
     * against a size ({@code n} vs {@code 128}) is refused, as the broadcasting {@code add} that canonicalize-ops
     * turns bias_add into refuses it — accepting it here let a module type-check and fail only after that pass.
     */
    private static boolean sameLength(Dim bias, Dim axis) {
        return bias instanceof Dim.Any || axis instanceof Dim.Any || Dims.provablyEqual(bias, axis);
    }

    static List<NDArray> compute(List<NDArray> inputs, BiasAddAttrs a) {
        NDArray x = inputs.get(0), b = inputs.get(1);
        AxisSplit sp = AxisSplit.of(x.shape(), a.axis(), NAME);
        if (b.size() != sp.mid()) {
            throw new IllegalArgumentException(NAME + ": bias " + Arrays2.show(b.shape()) + " does not match data "
                    + Arrays2.show(x.shape()) + " at axis " + sp.axis());
        }
        if (Arrays2.isF32(x) && Arrays2.isF32(b)) {
            float[] in = x.floatData(), bias = b.floatData();
            float[] out = new float[in.length];
            for (int o = 0; o < sp.outer(); o++) {
                for (int c = 0; c < sp.mid(); c++) {
                    int base = (o * sp.mid() + c) * sp.inner();
                    float bv = bias[c];
                    for (int i = 0; i < sp.inner(); i++) out[base + i] = in[base + i] + bv;
                }
            }
            return List.of(NDArray.wrap(DType.FLOAT32, x.shape(), out));
        }
        NDArray out = NDArray.zeros(x.dtype(), x.shape());
        boolean real = x.dtype().isFloat();
        for (int o = 0; o < sp.outer(); o++) {
            for (int c = 0; c < sp.mid(); c++) {
                int base = (o * sp.mid() + c) * sp.inner();
                for (int i = 0; i < sp.inner(); i++) {
                    if (real) out.setDouble(base + i, x.getDouble(base + i) + b.getDouble(c));
                    else out.setLong(base + i, x.getLong(base + i) + b.getLong(c));
                }
            }
        }
        return List.of(out);
    }
}
