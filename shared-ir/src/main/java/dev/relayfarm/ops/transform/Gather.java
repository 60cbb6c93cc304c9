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
 * {@code gather(data, axis, indices)} (numpy's take_along_axis, ONNX GatherElements): indices have
 * the rank of data, the output their shape, and
 * {@code out[i0, .., ik, .., in] = data[i0, .., indices[i0, .., in], .., in]} at {@code k = axis}.
 * Outside the axis the indices' dims must not exceed the data's. Negative indices count from the end;
 * indices outside {@code [-n, n)} are rejected.
 */
public final class Gather {
    private Gather() {}

    public record GatherAttrs(long axis) {}

    public static final OpDef<GatherAttrs> DEF = new OpDef<>(
            "gather", 2, Gather::parse, Gather::relation, OpPattern.INJECTIVE, Gather::compute);

    static GatherAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("gather", attrs);
        if (!r.has("axis")) throw new RelationException("gather: attribute 'axis' is required");
        GatherAttrs a = new GatherAttrs(r.integer("axis", 0));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, GatherAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("gather", types, 0, "data");
        TensorType indices = Args.indices("gather", types, 1, "indices");
        if (data == null || indices == null) return false;
        if (data.rank() != indices.rank()) {
            throw new RelationException("gather: indices " + Args.show(indices.shape()) + " must have the rank of data " + Args.show(data.shape()));
        }
        int axis = Args.axis("gather", a.axis(), data.rank());
        for (int d = 0; d < data.rank(); d++) {
            Dim di = indices.shape().get(d);
            Dim dd = data.shape().get(d);
            if (d != axis && di.isStatic() && dd.isStatic() && di.value() > dd.value()) {
                throw new RelationException("gather: indices " + Args.show(indices.shape()) + " exceed data " + Args.show(data.shape())
                        + " in dim " + d + " (only axis " + axis + " may differ freely)");
            }
        }
        reporter.assign(types.get(2), new TensorType(indices.shape(), data.dtype()));
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, GatherAttrs a) {
        NDArray data = in.get(0);
        NDArray indices = in.get(1);
        int[] ds = data.shape();
        int[] is = indices.shape();
        int rank = ds.length;
        int axis = Args.axis("gather", a.axis(), rank);
        long[] dst = Movement.strides(ds);
        int n = ds[axis];
        int[] map = new int[indices.size()];
        int[] index = new int[rank];
        for (int i = 0; i < map.length; i++) {
            long k = indices.getLong(i);
            if (k < -n || k >= n) throw new IllegalArgumentException("gather: index " + k + " is out of range for axis " + axis + " of size " + n);
            long src = 0;
            for (int d = 0; d < rank; d++) src += (d == axis ? (k < 0 ? k + n : k) : index[d]) * dst[d];
            map[i] = (int) src;
            for (int d = rank - 1; d >= 0 && ++index[d] == is[d]; d--) index[d] = 0;
        }
        return List.of(Movement.gather(data, is, map));
    }
}
