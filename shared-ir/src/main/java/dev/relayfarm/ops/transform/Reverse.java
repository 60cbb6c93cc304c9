package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.List;

/** {@code reverse(data, axis)}: the elements along {@code axis} in reverse order; the type is unchanged. */
public final class Reverse {
    private Reverse() {}

    public record ReverseAttrs(long axis) {}

    public static final OpDef<ReverseAttrs> DEF = new OpDef<>(
            "reverse", 1, Reverse::parse, Reverse::relation, OpPattern.INJECTIVE, (in, a) -> {
                NDArray x = in.getFirst();
                int[] s = x.shape();
                int axis = Args.axis("reverse", a.axis(), s.length);
                long[] st = Movement.strides(s);
                long offset = s[axis] == 0 ? 0 : (s[axis] - 1) * st[axis];
                st[axis] = -st[axis]; // walk the axis backwards from its last element
                return List.of(Movement.view(x, s, offset, st));
            });

    static ReverseAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("reverse", attrs);
        if (!r.has("axis")) throw new RelationException("reverse: attribute 'axis' is required");
        ReverseAttrs a = new ReverseAttrs(r.integer("axis", 0));
        r.finish();
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, ReverseAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("reverse", types, 0, "data");
        if (data == null) return false;
        Args.axis("reverse", a.axis(), data.rank());
        reporter.assign(types.get(1), data);
        return true;
    }
}
