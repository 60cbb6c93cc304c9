package dev.relayfarm.ops.algorithm;

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
import dev.relayfarm.ops.TypeReporter;
import dev.relayfarm.ops.nn.Rel;
import java.util.List;

/**
 * {@code cumsum(data, axis=None, dtype=None, exclusive=False)} and {@code cumprod} (TVM's ScanopAttrs):
 * running sums/products along {@code axis}; without an axis the input is flattened first (numpy).
 * {@code exclusive} shifts by one, so element i combines elements {@code [0, i)} and the first is
 * the identity (0 or 1). The result has {@code dtype} when given, else the input dtype; the
 * accumulation happens in that dtype's arithmetic (doubles for floats, wrapping longs for integers).
 */
public final class Scan {
    private Scan() {}

    /** {@code axis} and {@code dtype} are null when not given. */
    public record ScanAttrs(Long axis, DType dtype, boolean exclusive) {}

    public static final OpDef<ScanAttrs> CUMSUM = def("cumsum", false);
    public static final OpDef<ScanAttrs> CUMPROD = def("cumprod", true);

    private static OpDef<ScanAttrs> def(String name, boolean product) {
        return new OpDef<>(name, 1, a -> parse(name, a), (types, n, a, rep) -> relation(name, types, a, rep),
                OpPattern.OPAQUE, (in, a) -> List.of(compute(name, in.getFirst(), a, product)));
    }

    static ScanAttrs parse(String name, Attrs attrs) {
        AttrReader r = new AttrReader(name, attrs);
        Long axis = r.has("axis") ? r.integer("axis", 0) : null;
        r.integer("axis", 0); // an explicit axis=None counts as read
        ScanAttrs a = new ScanAttrs(axis, r.dtype("dtype", null), r.bool("exclusive", false));
        r.finish();
        return a;
    }

    static boolean relation(String name, List<Type> types, ScanAttrs a, TypeReporter reporter) {
        TensorType x = Rel.tensor(name, "data", types.get(0));
        if (x == null) return false;
        DType dtype = a.dtype() == null ? x.dtype() : a.dtype();
        if (a.axis() == null) {
            Dim n = Dim.of(1);
            for (Dim d : x.shape()) n = Dims.mul(n, d);
            reporter.assign(types.get(1), new TensorType(List.of(n), dtype));
        } else {
            Rel.axis(name, Math.toIntExact(a.axis()), x.rank());
            reporter.assign(types.get(1), new TensorType(x.shape(), dtype));
        }
        return true;
    }

    static NDArray compute(String name, NDArray x, ScanAttrs a, boolean product) {
        DType dtype = a.dtype() == null ? x.dtype() : a.dtype();
        int[] shape = a.axis() == null ? new int[] {x.elementCount()} : x.shape();
        int axis = a.axis() == null ? 0 : Rel.axis(name, Math.toIntExact(a.axis()), shape.length);
        NDArray out = NDArray.zeros(dtype, shape);
        int outer = 1, inner = 1;
        for (int i = 0; i < axis; i++) outer *= shape[i];
        for (int i = axis + 1; i < shape.length; i++) inner *= shape[i];
        int n = shape.length == 0 ? 1 : shape[axis];
        boolean real = dtype.isFloat();
        for (int o = 0; o < outer; o++) {
            for (int j = 0; j < inner; j++) {
                double accD = product ? 1 : 0;
                long accL = product ? 1 : 0;
                for (int k = 0; k < n; k++) {
                    int idx = (o * n + k) * inner + j;
                    if (real) {
                        double v = x.getDouble(idx);
                        if (!a.exclusive()) accD = product ? accD * v : accD + v;
                        out.setDouble(idx, accD);
                        if (a.exclusive()) accD = product ? accD * v : accD + v;
                    } else {
                        long v = x.getLong(idx);
                        if (!a.exclusive()) accL = product ? accL * v : accL + v;
                        out.setLong(idx, accL);
                        if (a.exclusive()) accL = product ? accL * v : accL + v;
                    }
                }
            }
        }
        return out;
    }
}
