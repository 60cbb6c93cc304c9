package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
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
 * {@code shape_of(data, dtype="int32")}: the run-time shape as a 1-d tensor of {@code rank} values
 * (only the rank must be known statically). OPAQUE as in TVM (it feeds dynamic shape computations).
 */
public final class ShapeOf {
    private ShapeOf() {}

    public record ShapeOfAttrs(DType dtype) {}

    public static final OpDef<ShapeOfAttrs> DEF = new OpDef<>(
            "shape_of", 1, ShapeOf::parse, ShapeOf::relation, OpPattern.OPAQUE, (in, a) -> {
                int[] s = in.getFirst().shape();
                NDArray out = Movement.allocate(a.dtype(), new int[] {s.length});
                for (int i = 0; i < s.length; i++) out.setLong(i, s[i]);
                return List.of(out);
            });

    static ShapeOfAttrs parse(Attrs attrs) {
        AttrReader r = new AttrReader("shape_of", attrs);
        ShapeOfAttrs a = new ShapeOfAttrs(r.dtype("dtype", DType.INT32));
        r.finish();
        if (!a.dtype().isInteger()) throw new RelationException("shape_of: dtype must be an integer type, got " + a.dtype());
        return a;
    }

    static boolean relation(List<Type> types, int numInputs, ShapeOfAttrs a, TypeReporter reporter) {
        TensorType data = Args.tensor("shape_of", types, 0, "data");
        if (data == null) return false;
        reporter.assign(types.get(1), TensorType.of(a.dtype(), data.rank()));
        return true;
    }
}
