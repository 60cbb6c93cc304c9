package dev.relayfarm.ops.transform;

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
import java.util.ArrayList;
import java.util.List;

/**
 * {@code scatter_nd(data, indices, updates, mode="update")}, the inverse of {@code gather_nd} in the
 * same TVM layout: indices have shape {@code (M, Y...)}, each column of M values names a slice
 * {@code data[i0, .., iM-1]}, and updates have shape {@code Y + data[M:]}, one slice per column. The
 * output is a copy of data with every slice combined by {@code mode} ({@code update}, {@code add},
 * {@code mul}, {@code min}, {@code max}) in row-major order of Y, so with {@code update} the last
 * duplicate wins. Negative indices count from the end; others out of range are rejected.
 */
public final class ScatterNd {
    private ScatterNd() {}

    public record ScatterNdAttrs(ScatterReduction mode) {}

    private static final String NAME = "scatter_nd";

    public static final OpDef<ScatterNdAttrs> DEF = new OpDef<>(
            NAME, 3, ScatterNd::parse, ScatterNd::relation, OpPattern.OPAQUE, ScatterNd::compute);

    static ScatterNdAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        ScatterNdAttrs a = new ScatterNdAttrs(ScatterReduction.parse(NAME, "mode", r.string("mode", "update")));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, ScatterNdAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor(NAME, types, 0, "data");
        TensorType indices = Args.indices(NAME, types, 1, "indices");
        TensorType updates = Args.tensor(NAME, types, 2, "updates");
        if (data == null || indices == null || updates == null) return false;
        if (indices.rank() == 0) throw new RelationException(NAME + ": indices must have rank >= 1, got a scalar");
        if (!updates.dtype().equals(data.dtype())) {
            throw new RelationException(NAME + ": updates have dtype " + updates.dtype() + " but data " + data.dtype());
        }
        Dim m = indices.shape().getFirst();
        if (!m.isStatic()) {
            throw new RelationException(NAME + ": the first dim of indices " + Args.show(indices.shape())
                    + " must be static to know how many data dims it indexes");
        }
        if (m.value() > data.rank()) {
            throw new RelationException(NAME + ": indices " + Args.show(indices.shape()) + " index " + m.value() + " dims but data "
                    + Args.show(data.shape()) + " has rank " + data.rank());
        }
        List<Dim> expected = new ArrayList<>(indices.shape().subList(1, indices.rank()));
        expected.addAll(data.shape().subList((int) m.value(), data.rank()));
        boolean fits = expected.size() == updates.rank();
        for (int d = 0; fits && d < expected.size(); d++) {
            Dim e = expected.get(d), u = updates.shape().get(d);
            fits = !(e.isStatic() && u.isStatic() && e.value() != u.value());
        }
        if (!fits) {
            throw new RelationException(NAME + ": updates " + Args.show(updates.shape()) + " must have shape " + Args.show(expected)
                    + " (indices " + Args.show(indices.shape()) + " after M, then data " + Args.show(data.shape()) + " from dim " + m.value() + ")");
        }
        reporter.assign(types.get(3), data);
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, ScatterNdAttrs a) {
        NDArray data = in.get(0);
        NDArray indices = in.get(1);
        NDArray updates = in.get(2);
        int[] ds = data.shape();
        int[] is = indices.shape();
        int m = is[0];
        int count = Movement.product(is, 1, is.length); // index columns, one per updated slice
        int inner = Movement.product(ds, m, ds.length);
        long[] st = Movement.strides(ds);
        NDArray out = Movement.allocate(data.dtype(), ds);
        Movement.copyElements(data, 0, out, 0, data.elementCount());
        boolean real = data.dtype().isFloat();
        for (int j = 0; j < count; j++) {
            long at = 0;
            for (int k = 0; k < m; k++) {
                long idx = indices.getLong(k * count + j);
                if (idx < -ds[k] || idx >= ds[k]) {
                    throw new IllegalArgumentException(NAME + ": index " + idx + " is out of range for dim " + k + " of size " + ds[k]);
                }
                at += (idx < 0 ? idx + ds[k] : idx) * st[k];
            }
            for (int e = 0; e < inner; e++) a.mode().apply(out, (int) at + e, updates, j * inner + e, real);
        }
        return List.of(out);
    }
}
