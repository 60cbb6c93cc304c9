package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
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
 * {@code arange(start, stop, step, dtype="float32")}: {@code ceil((stop - start) / step)} values
 * {@code start + i * step}. Its bounds are tensor arguments, so the length is a run-time value: the
 * relation gives {@code Tensor[(?), dtype]} and the kernel the real length (constant folding of
 * constant bounds then recovers a static shape). The bounds must be scalars of {@code dtype}, as in
 * TVM. OPAQUE like TVM, since fusion does not handle its data-dependent shape.
 */
public final class Arange {
    private Arange() {}

    public record ArangeAttrs(DType dtype) {}

    public static final OpDef<ArangeAttrs> DEF = new OpDef<>(
            "arange", 3, Arange::parse, Arange::relation, OpPattern.OPAQUE, Arange::compute);

    static ArangeAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("arange", attrs);
        ArangeAttrs a = new ArangeAttrs(r.dtype("dtype", DType.FLOAT32));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, ArangeAttrs a, TypeReporter reporter) {
        String[] names = {"start", "stop", "step"};
        boolean known = true;
        for (int i = 0; i < 3; i++) {
            TensorType t = Args.tensor("arange", types, i, names[i]);
            if (t == null) {
                known = false;
            } else if (!t.isScalar() || !t.dtype().equals(a.dtype())) {
                throw new RelationException("arange: " + names[i] + " must be a scalar " + a.dtype() + " (the dtype attribute), got " + t);
            }
        }
        if (!known) return false;
        reporter.assign(types.get(3), new TensorType(List.of(Dim.ANY), a.dtype()));
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, ArangeAttrs a) {
        NDArray start = in.get(0);
        NDArray stop = in.get(1);
        NDArray step = in.get(2);
        if (a.dtype().isFloat()) {
            double b = start.getDouble(0);
            double s = step.getDouble(0);
            if (s == 0 || Double.isNaN(s)) throw new IllegalArgumentException("arange: step must be non-zero, got " + s);
            int n = length(Math.ceil((stop.getDouble(0) - b) / s));
            NDArray out = Movement.allocate(a.dtype(), new int[] {n});
            for (int i = 0; i < n; i++) out.setDouble(i, b + i * s);
            return List.of(out);
        }
        long b = start.getLong(0);
        long s = step.getLong(0);
        if (s == 0) throw new IllegalArgumentException("arange: step must be non-zero, got 0");
        long span = stop.getLong(0) - b;
        // Integer ceiling division that rounds toward +infinity for either sign of the step.
        int n = length(-Math.floorDiv(-span, s));
        NDArray out = Movement.allocate(a.dtype(), new int[] {n});
        for (int i = 0; i < n; i++) out.setLong(i, b + i * s);
        return List.of(out);
    }

    private static int length(double n) {
        if (n > Integer.MAX_VALUE) throw new IllegalArgumentException("arange: " + n + " elements is too many");
        return n <= 0 ? 0 : (int) n;
    }
}
