package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Attrs;
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
import java.util.ArrayList;
import java.util.List;

/**
 * {@code stack((a, b, ...), axis=0)}: joins tensors of one shape and dtype along a new axis of size
 * {@code n} (the axis is in {@code [-rank-1, rank]}). Any agrees with any dim; a known dim refines it.
 */
public final class Stack {
    private Stack() {}

    public record StackAttrs(long axis) {}

    public static final OpDef<StackAttrs> DEF = new OpDef<>(
            "stack", 1, Stack::parse, Stack::relation, OpPattern.INJECTIVE, Stack::compute);

    static StackAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("stack", attrs);
        StackAttrs a = new StackAttrs(r.integer("axis", 0));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, StackAttrs a, TypeReporter reporter) {
        List<TensorType> in = Args.tensors("stack", types, 0, "data");
        if (in == null) return false;
        if (in.isEmpty()) throw new RelationException("stack: needs at least one input, got an empty tuple");
        TensorType first = in.getFirst();
        int axis = Args.axis("stack", a.axis(), first.rank() + 1);
        List<Dim> shape = new ArrayList<>(first.shape());
        for (int i = 1; i < in.size(); i++) {
            TensorType t = in.get(i);
            if (!t.dtype().equals(first.dtype())) {
                throw new RelationException("stack: input " + i + " has dtype " + t.dtype() + " but input 0 has " + first.dtype());
            }
            boolean same = t.rank() == first.rank();
            for (int d = 0; same && d < t.rank(); d++) same = Dims.compatible(shape.get(d), t.shape().get(d));
            if (!same) {
                throw new RelationException("stack: input " + i + " has shape " + Args.show(t.shape()) + " but input 0 has "
                        + Args.show(first.shape()) + ": all inputs must have the same shape");
            }
            for (int d = 0; d < t.rank(); d++) if (shape.get(d) instanceof Dim.Any) shape.set(d, t.shape().get(d));
        }
        shape.add(axis, Dim.of(in.size()));
        reporter.assign(types.get(1), new TensorType(shape, first.dtype()));
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, StackAttrs a) {
        NDArray first = in.getFirst();
        int[] s = first.shape();
        int axis = Args.axis("stack", a.axis(), s.length + 1);
        int[] outShape = new int[s.length + 1];
        System.arraycopy(s, 0, outShape, 0, axis);
        outShape[axis] = in.size();
        System.arraycopy(s, axis, outShape, axis + 1, s.length - axis);
        NDArray out = Movement.allocate(first.dtype(), outShape);
        int outer = Movement.product(s, 0, axis);
        int inner = Movement.product(s, axis, s.length);
        int pos = 0;
        for (int o = 0; o < outer; o++) {
            for (NDArray x : in) {
                Movement.copyElements(x, o * inner, out, pos, inner);
                pos += inner;
            }
        }
        return List.of(out);
    }
}
