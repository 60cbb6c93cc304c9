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
import java.util.List;

/**
 * {@code scatter_elements(data, indices, updates, axis=0, reduction="update")} (TVM's name; ONNX
 * ScatterElements and its opset &le; 10 name Scatter), the inverse of {@code gather}: the output is a
 * copy of data where, for every position {@code (i0, .., in)} of indices,
 * {@code out[i0, .., indices[i0, .., in], .., in] (op)= updates[i0, .., in]} at {@code k = axis}.
 * Updates have the shape of indices; indices the rank of data and, outside the axis, dims no larger
 * than the data's. Negative indices count from the end; indices outside {@code [-n, n)} are rejected.
 * Updates are applied in row-major order of indices, so with {@code update} the last duplicate wins.
 */
public final class ScatterElements {
    private ScatterElements() {}

    public record ScatterElementsAttrs(long axis, ScatterReduction reduction) {}

    private static final String NAME = "scatter_elements";

    public static final OpDef<ScatterElementsAttrs> DEF = new OpDef<>(
            NAME, 3, ScatterElements::parse, ScatterElements::relation, OpPattern.OPAQUE, ScatterElements::compute);

    static ScatterElementsAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader(NAME, attrs);
        ScatterElementsAttrs a = new ScatterElementsAttrs(r.integer("axis", 0),
                ScatterReduction.parse(NAME, "reduction", r.string("reduction", "update")));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, ScatterElementsAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor(NAME, types, 0, "data");
        TensorType indices = Args.indices(NAME, types, 1, "indices");
        TensorType updates = Args.tensor(NAME, types, 2, "updates");
        if (data == null || indices == null || updates == null) return false;
        if (data.rank() != indices.rank()) {
            throw new RelationException(NAME + ": indices " + Args.show(indices.shape()) + " must have the rank of data " + Args.show(data.shape()));
        }
        if (!updates.dtype().equals(data.dtype())) {
            throw new RelationException(NAME + ": updates have dtype " + updates.dtype() + " but data " + data.dtype());
        }
        if (updates.rank() != indices.rank()) {
            throw new RelationException(NAME + ": updates " + Args.show(updates.shape()) + " must have the shape of indices " + Args.show(indices.shape()));
        }
        int axis = Args.axis(NAME, a.axis(), data.rank());
        for (int d = 0; d < data.rank(); d++) {
            Dim di = indices.shape().get(d);
            Dim du = updates.shape().get(d);
            Dim dd = data.shape().get(d);
            if (di.isStatic() && du.isStatic() && di.value() != du.value()) {
                throw new RelationException(NAME + ": updates " + Args.show(updates.shape()) + " must have the shape of indices " + Args.show(indices.shape()));
            }
            if (d != axis && di.isStatic() && dd.isStatic() && di.value() > dd.value()) {
                throw new RelationException(NAME + ": indices " + Args.show(indices.shape()) + " exceed data " + Args.show(data.shape())
                        + " in dim " + d + " (only axis " + axis + " may differ freely)");
            }
        }
        reporter.assign(types.get(3), data);
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, ScatterElementsAttrs a) {
        NDArray data = in.get(0);
        NDArray indices = in.get(1);
        NDArray updates = in.get(2);
        int[] ds = data.shape();
        int[] is = indices.shape();
        int rank = ds.length;
        int axis = Args.axis(NAME, a.axis(), rank);
        NDArray out = Movement.allocate(data.dtype(), ds);
        Movement.copyElements(data, 0, out, 0, data.elementCount());
        long[] dst = Movement.strides(ds);
        int n = ds[axis];
        boolean real = data.dtype().isFloat();
        int[] index = new int[rank];
        int count = indices.elementCount();
        for (int i = 0; i < count; i++) {
            long k = indices.getLong(i);
            if (k < -n || k >= n) throw new IllegalArgumentException(NAME + ": index " + k + " is out of range for axis " + axis + " of size " + n);
            long at = 0;
            for (int d = 0; d < rank; d++) at += (d == axis ? (k < 0 ? k + n : k) : index[d]) * dst[d];
            a.reduction().apply(out, (int) at, updates, i, real);
            for (int d = rank - 1; d >= 0 && ++index[d] == is[d]; d--) index[d] = 0;
        }
        return List.of(out);
    }
}
