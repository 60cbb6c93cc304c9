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
 * {@code transpose(data, axes=[...])}: output dim {@code i} is input dim {@code axes[i]};
 * {@code axes=None} reverses the dims. {@code transpose(Tensor[(n, 3, 4)], axes=[2, 0, 1]) : Tensor[(4, n, 3)]}.
 */
public final class Transpose {
    private Transpose() {}

    /** {@code axes} is null for "reverse all". */
    public record TransposeAttrs(List<Long> axes) {}

    public static final OpDef<TransposeAttrs> DEF = new OpDef<>(
            "transpose", 1, Transpose::parse, Transpose::relation, OpPattern.INJECTIVE, (in, a) -> {
                NDArray x = in.getFirst();
                int[] perm = permutation(a, x.rank());
                int[] shape = x.shape();
                long[] st = Movement.strides(shape);
                int[] outShape = new int[perm.length];
                long[] viewStrides = new long[perm.length];
                for (int i = 0; i < perm.length; i++) {
                    outShape[i] = shape[perm[i]];
                    viewStrides[i] = st[perm[i]];
                }
                return List.of(Movement.view(x, outShape, 0, viewStrides));
            });

    static TransposeAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("transpose", attrs);
        TransposeAttrs a = new TransposeAttrs(Args.boxed(r.longs("axes", (long[]) null)));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, TransposeAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("transpose", types, 0, "data");
        if (data == null) return false;
        int[] perm = permutation(a, data.rank());
        List<Dim> out = new ArrayList<>();
        for (int p : perm) out.add(data.shape().get(p));
        reporter.assign(types.get(1), new TensorType(out, data.dtype()));
        return true;
    }

    /** The normalized permutation; checks it names every axis exactly once. */
    static int[] permutation(TransposeAttrs a, int rank) {
        int[] perm = new int[rank];
        if (a.axes() == null) {
            for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
            return perm;
        }
        if (a.axes().size() != rank) {
            throw new RelationException("transpose: axes " + a.axes() + " has " + a.axes().size() + " entries but the input has rank " + rank);
        }
        boolean[] seen = new boolean[rank];
        for (int i = 0; i < rank; i++) {
            int ax = Args.axis("transpose", a.axes().get(i), rank);
            if (seen[ax]) throw new RelationException("transpose: axes " + a.axes() + " name axis " + ax + " twice (must be a permutation)");
            seen[ax] = true;
            perm[i] = ax;
        }
        return perm;
    }
}
