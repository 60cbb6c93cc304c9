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
 * {@code squeeze(data, axis=[...])} removes the listed size-1 dims; {@code axis=None} removes every
 * dim statically known to be 1 (an Any or symbolic dim is kept, since it may not be 1). A listed dim
 * that is Any or symbolic is removed on trust, as TVM does; only a known size other than 1 is an error.
 */
public final class Squeeze {
    private Squeeze() {}

    /** {@code axis} is null for "all dims of size 1". */
    public record SqueezeAttrs(List<Long> axis) {}

    public static final OpDef<SqueezeAttrs> DEF = new OpDef<>(
            "squeeze", 1, Squeeze::parse, Squeeze::relation, OpPattern.INJECTIVE, (in, a) -> {
                NDArray x = in.getFirst();
                return List.of(Movement.reshaped(x, Args.ints(outShape(a, Args.dims(x.shape())))));
            });

    static SqueezeAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("squeeze", attrs);
        SqueezeAttrs a = new SqueezeAttrs(Args.boxed(r.longs("axis", (long[]) null)));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, SqueezeAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("squeeze", types, 0, "data");
        if (data == null) return false;
        reporter.assign(types.get(1), new TensorType(outShape(a, data.shape()), data.dtype()));
        return true;
    }

    static List<Dim> outShape(SqueezeAttrs a, List<Dim> in) {
        boolean[] drop = new boolean[in.size()];
        if (a.axis() == null) {
            for (int i = 0; i < in.size(); i++) drop[i] = in.get(i).equals(Dim.of(1));
        } else {
            for (long ax : a.axis()) {
                int i = Args.axis("squeeze", ax, in.size());
                Dim d = in.get(i);
                if (d.isStatic() && d.value() != 1) {
                    throw new RelationException("squeeze: axis " + ax + " of shape " + Args.show(in) + " has size " + d + ", must be 1");
                }
                drop[i] = true;
            }
        }
        List<Dim> out = new ArrayList<>();
        for (int i = 0; i < in.size(); i++) if (!drop[i]) out.add(in.get(i));
        return out;
    }
}
