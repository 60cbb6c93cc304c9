package dev.relayfarm.ops.nn;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Dim;
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
 * {@code annotation.simulated_quantize(data, scale, kind="activation", nbit=8, sign=True, axis=-1)}, TVM's
 * simulated-quantize point: the float tensor the integer program will carry at this point,
 * {@code clip(round(data / scale), qmin, qmax) * scale} with {@code [qmin, qmax] = [-(2^(nbit-1) - 1), 2^(nbit-1) - 1]}
 * (signed, symmetric) or {@code [0, 2^nbit - 1]}. {@code scale} is a float scalar (per tensor) or a 1-D tensor with
 * one scale per index of {@code axis} (per channel, for weights). A zero scale means "not calibrated yet": the
 * point passes {@code data} through, so an annotated program computes what the float program computed.
 * {@code kind} ({@code "input"}, {@code "weight"}, {@code "activation"}) says what the quantize passes do with it.
 * Not lowered to kernels: quantize-realize replaces every point by integer operators.
 */
public final class SimulatedQuantize {
    public static final String NAME = "annotation.simulated_quantize";
    public static final List<String> KINDS = List.of("input", "weight", "activation");

    private SimulatedQuantize() {}

    public record Attributes(String kind, int nbit, boolean sign, int axis) {
        /** The largest quantized value. */
        public long qmax() {
            return sign ? (1L << (nbit - 1)) - 1 : (1L << nbit) - 1;
        }

        public long qmin() {
            return sign ? -qmax() : 0;
        }
    }

    public static OpDef<Attributes> def() {
        return new OpDef<>(NAME, 2, SimulatedQuantize::parse, SimulatedQuantize::relation, OpPattern.OPAQUE, SimulatedQuantize::compute);
    }

    public static Attributes parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        Attributes a = new Attributes(r.string("kind", "activation"), r.int32("nbit", 8), r.bool("sign", true), r.int32("axis", -1));
        r.finish();
        if (!KINDS.contains(a.kind())) throw new RelationException(NAME + ": kind must be one of " + KINDS + ", got \"" + a.kind() + "\"");
        if (a.nbit() < 2 || a.nbit() > 32) throw new RelationException(NAME + ": nbit must be in [2, 32], got " + a.nbit());
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, Attributes a, TypeReporter reporter) {
        TensorType data = Rel.tensor(NAME, "data", types.get(0));
        TensorType scale = Rel.tensor(NAME, "scale", types.get(1));
        if (data == null || scale == null) return false;
        if (!data.dtype().isFloat() || !scale.dtype().isFloat()) {
            throw new RelationException(NAME + ": data and scale must be float tensors, got " + data + " and " + scale);
        }
        if (scale.rank() > 1) throw new RelationException(NAME + ": scale must be a scalar or 1-D (per channel), got " + scale);
        if (scale.rank() == 1) {
            if (a.axis() < 0) throw new RelationException(NAME + ": a 1-D scale " + scale + " needs axis >= 0");
            int axis = Rel.axis(NAME, a.axis(), data.rank());
            Dim c = data.shape().get(axis), s = scale.shape().get(0);
            if (Rel.surelyDiffer(c, s) && !(s instanceof Dim.Int(long one) && one == 1)) {
                throw new RelationException(NAME + ": scale " + scale + " must have one value per index of axis " + axis + " of " + data);
            }
        }
        reporter.assign(types.get(2), data);
        return true;
    }

    static List<NDArray> compute(List<NDArray> inputs, Attributes a) {
        NDArray x = inputs.get(0), s = inputs.get(1);
        NDArray out = NDArray.zeros(x.dtype(), x.shape());
        int n = x.elementCount();
        int inner = 1, channels = 1;
        if (s.rank() == 1 && s.elementCount() > 1) {
            AxisSplit sp = AxisSplit.of(x.shape(), a.axis(), NAME);
            inner = sp.inner();
            channels = sp.mid();
        }
        double lo = a.qmin(), hi = a.qmax();
        for (int i = 0; i < n; i++) {
            double scale = s.getDouble(channels == 1 ? 0 : (i / inner) % channels);
            double v = x.getDouble(i);
            out.setDouble(i, scale == 0 ? v : Math.min(Math.max(round(v / scale), lo), hi) * scale);
        }
        return List.of(out);
    }

    /** The rounding of the {@code round} operator (half away from zero, C's {@code round}), which realized programs use. */
    public static double round(double v) {
        return v < 0 ? -Math.floor(-v + 0.5) : Math.floor(v + 0.5);
    }
}
