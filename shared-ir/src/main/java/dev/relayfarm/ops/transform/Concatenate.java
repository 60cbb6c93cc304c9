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
 * {@code concatenate((a, b, ...), axis=0)}: joins tensors of equal rank and dtype along an existing
 * axis; the other dims must agree (Any agrees with anything). The axis size is the sum
 * ({@code n + 3}); any Any input along the axis makes it Any.
 */
public final class Concatenate {
    private Concatenate() {}

    public record ConcatenateAttrs(long axis) {}

    public static final OpDef<ConcatenateAttrs> DEF = new OpDef<>(
            "concatenate", 1, Concatenate::parse, Concatenate::relation, OpPattern.INJECTIVE, Concatenate::compute);

    static ConcatenateAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("concatenate", attrs);
        ConcatenateAttrs a = new ConcatenateAttrs(r.integer("axis", 0));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, ConcatenateAttrs a, TypeReporter reporter) {
        List<TensorType> in = Args.tensors("concatenate", types, 0, "data");
        if (in == null) return false;
        if (in.isEmpty()) throw new RelationException("concatenate: needs at least one input, got an empty tuple");
        TensorType first = in.getFirst();
        int rank = first.rank();
        int axis = Args.axis("concatenate", a.axis(), rank);
        List<Dim> out = new ArrayList<>(first.shape());
        int[] ref = new int[rank]; // which input each non-axis dim of the output came from
        for (int i = 1; i < in.size(); i++) {
            TensorType t = in.get(i);
            if (!t.dtype().equals(first.dtype())) {
                throw new RelationException("concatenate: input " + i + " has dtype " + t.dtype() + " but input 0 has " + first.dtype());
            }
            if (t.rank() != rank) {
                throw new RelationException("concatenate: input " + i + " has rank " + t.rank() + " but input 0 has rank " + rank);
            }
            for (int d = 0; d < rank; d++) {
                Dim di = t.shape().get(d);
                if (d == axis) {
                    out.set(d, Dims.add(out.get(d), di));
                } else if (!Dims.compatible(out.get(d), di)) {
                    throw new RelationException("concatenate: input " + i + " has shape " + Args.show(t.shape()) + " but input " + ref[d]
                            + " has " + Args.show(in.get(ref[d]).shape()) + ": dims other than axis " + axis + " must match");
                } else if (out.get(d) instanceof Dim.Any && !(di instanceof Dim.Any)) {
                    out.set(d, di); // a known size from a later input refines an Any
                    ref[d] = i;
                }
            }
        }
        reporter.assign(types.get(1), new TensorType(out, first.dtype()));
        return true;
    }

    private static List<NDArray> compute(List<NDArray> in, ConcatenateAttrs a) {
        NDArray first = in.getFirst();
        int axis = Args.axis("concatenate", a.axis(), first.rank());
        int[] shape = first.shape();
        int total = 0;
        for (NDArray x : in) total += x.dim(axis);
        shape[axis] = total;
        NDArray out = Movement.allocate(first.dtype(), shape);
        int outer = Movement.product(shape, 0, axis);
        int inner = Movement.product(shape, axis + 1, shape.length);
        int pos = 0;
        // Row-major: for each outer index, the inputs' axis blocks lie side by side.
        for (int o = 0; o < outer; o++) {
            for (NDArray x : in) {
                int block = x.dim(axis) * inner;
                Movement.copyElements(x, o * block, out, pos, block);
                pos += block;
            }
        }
        return List.of(out);
    }
}
