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
import java.util.ArrayList;
import java.util.List;

/**
 * {@code one_hot(indices, on_value, off_value, depth, axis=-1, dtype)}: inserts a dim of size
 * {@code depth} at {@code axis} (in {@code [-rank-1, rank]}, -1 = last); the element is
 * {@code on_value} where its position along that dim equals the index, else {@code off_value}, both
 * cast to {@code dtype}. Indices outside {@code [0, depth)} (negative ones too, as in TVM) give a row
 * of {@code off_value}. Without {@code dtype}, the output takes {@code on_value}'s dtype.
 * OUT_ELEMWISE_FUSABLE as in TVM.
 */
public final class OneHot {
    private OneHot() {}

    /** {@code dtype} is null when not given. */
    public record OneHotAttrs(long depth, long axis, DType dtype) {}

    public static final OpDef<OneHotAttrs> DEF = new OpDef<>(
            "one_hot", 3, OneHot::parse, OneHot::relation, OpPattern.OUT_ELEMWISE_FUSABLE, OneHot::compute);

    static OneHotAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("one_hot", attrs);
        if (!r.has("depth")) throw new RelationException("one_hot: attribute 'depth' is required");
        OneHotAttrs a = new OneHotAttrs(r.integer("depth", 0), r.integer("axis", -1), r.dtype("dtype", null));
        r.finish();
        if (a.depth() < 0) throw new RelationException("one_hot: depth must be >= 0, got " + a.depth());
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, OneHotAttrs a, TypeReporter reporter) {
        TensorType indices = Args.indices("one_hot", types, 0, "indices");
        TensorType on = Args.scalar("one_hot", types, 1, "on_value");
        TensorType off = Args.scalar("one_hot", types, 2, "off_value");
        if (indices == null || on == null || off == null) return false;
        List<Dim> out = new ArrayList<>(indices.shape());
        out.add(Args.axis("one_hot", a.axis(), indices.rank() + 1), Dim.of(a.depth()));
        reporter.assign(types.get(3), new TensorType(out, a.dtype() == null ? on.dtype() : a.dtype()));
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, OneHotAttrs a) {
        NDArray indices = in.get(0);
        DType dtype = a.dtype() == null ? in.get(1).dtype() : a.dtype();
        NDArray on = Movement.castScalar(in.get(1), dtype);
        int[] is = indices.shape();
        int axis = Args.axis("one_hot", a.axis(), is.length + 1);
        int depth = Math.toIntExact(a.depth());
        int[] outShape = new int[is.length + 1];
        System.arraycopy(is, 0, outShape, 0, axis);
        outShape[axis] = depth;
        System.arraycopy(is, axis, outShape, axis + 1, is.length - axis);
        NDArray out = Movement.filled(dtype, outShape, Movement.castScalar(in.get(2), dtype));
        // Indices viewed as [outer, inner] around the new axis; output is [outer, depth, inner].
        int outer = Movement.product(is, 0, axis);
        int inner = Movement.product(is, axis, is.length);
        for (int o = 0; o < outer; o++) {
            for (int j = 0; j < inner; j++) {
                long k = indices.getLong(o * inner + j);
                if (k >= 0 && k < depth) Movement.copyElements(on, 0, out, (o * depth + (int) k) * inner + j, 1);
            }
        }
        return List.of(out);
    }
}
