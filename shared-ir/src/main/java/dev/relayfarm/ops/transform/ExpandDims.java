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
 * {@code expand_dims(data, axis, num_newaxis=1)} inserts {@code num_newaxis} dims of size 1 before
 * position {@code axis} (in {@code [-rank-1, rank]}; negative counts from the end of the output).
 */
public final class ExpandDims {
    private ExpandDims() {}

    public record ExpandDimsAttrs(long axis, long numNewaxis) {}

    public static final OpDef<ExpandDimsAttrs> DEF = new OpDef<>(
            "expand_dims", 1, ExpandDims::parse, ExpandDims::relation, OpPattern.INJECTIVE, (in, a) -> {
                NDArray x = in.getFirst();
                return List.of(Movement.reshaped(x, Args.ints(outShape(a, Args.dims(x.shape())))));
            });

    static ExpandDimsAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("expand_dims", attrs);
        if (!r.has("axis")) throw new RelationException("expand_dims: attribute 'axis' is required");
        ExpandDimsAttrs a = new ExpandDimsAttrs(r.integer("axis", 0), r.integer("num_newaxis", 1));
        r.finish();
        if (a.numNewaxis() < 0) throw new RelationException("expand_dims: num_newaxis must be >= 0, got " + a.numNewaxis());
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, ExpandDimsAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("expand_dims", types, 0, "data");
        if (data == null) return false;
        reporter.assign(types.get(1), new TensorType(outShape(a, data.shape()), data.dtype()));
        return true;
    }

    static List<Dim> outShape(ExpandDimsAttrs a, List<Dim> in) {
        // The position is one of rank + 1 gaps; a negative axis counts gaps from the end (-1 = append).
        int pos = Args.axis("expand_dims", a.axis(), in.size() + 1);
        List<Dim> out = new ArrayList<>(in.subList(0, pos));
        for (long i = 0; i < a.numNewaxis(); i++) out.add(Dim.of(1));
        out.addAll(in.subList(pos, in.size()));
        return out;
    }
}
