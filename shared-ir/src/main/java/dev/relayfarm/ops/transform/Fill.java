package dev.relayfarm.ops.transform;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.AttrReader;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayList;
import java.util.List;

/**
 * The creation operators that fill a tensor with one value: {@code zeros}, {@code ones} and
 * {@code full(fill_value)} take their shape and dtype from attributes (TVM's InitOpAttrs);
 * {@code zeros_like}, {@code ones_like} and {@code full_like(data, fill_value)} copy the type of
 * {@code data}. The fill value is cast to the output dtype. ELEMWISE, as in TVM, so they fuse.
 */
public final class Fill {
    private Fill() {}

    /** {@code dtype} is null when not given ({@code full} then takes the fill value's dtype). */
    public record InitAttrs(List<Long> shape, DType dtype) {}

    public static final OpDef<InitAttrs> ZEROS = new OpDef<>(
            "zeros", 0, a -> parse("zeros", a, DType.FLOAT32), (t, n, a, r) -> init(t, a, null, r), OpPattern.ELEMWISE,
            (in, a) -> List.of(Movement.filled(a.dtype(), shape(a), 0.0)));

    public static final OpDef<InitAttrs> ONES = new OpDef<>(
            "ones", 0, a -> parse("ones", a, DType.FLOAT32), (t, n, a, r) -> init(t, a, null, r), OpPattern.ELEMWISE,
            (in, a) -> List.of(Movement.filled(a.dtype(), shape(a), 1.0)));

    public static final OpDef<InitAttrs> FULL = new OpDef<>(
            "full", 1, a -> parse("full", a, null), Fill::fullRelation, OpPattern.ELEMWISE, (in, a) -> {
                NDArray v = in.getFirst();
                DType dtype = a.dtype() == null ? v.dtype() : a.dtype();
                return List.of(Movement.filled(dtype, shape(a), Movement.castScalar(v, dtype)));
            });

    public static final OpDef<NoAttrs> ZEROS_LIKE = new OpDef<>(
            "zeros_like", 1, a -> NoAttrs.parse("zeros_like", a), (t, n, a, r) -> like("zeros_like", t, false, r), OpPattern.ELEMWISE,
            (in, a) -> List.of(Movement.filled(in.getFirst().dtype(), in.getFirst().shape(), 0.0)));

    public static final OpDef<NoAttrs> ONES_LIKE = new OpDef<>(
            "ones_like", 1, a -> NoAttrs.parse("ones_like", a), (t, n, a, r) -> like("ones_like", t, false, r), OpPattern.ELEMWISE,
            (in, a) -> List.of(Movement.filled(in.getFirst().dtype(), in.getFirst().shape(), 1.0)));

    public static final OpDef<NoAttrs> FULL_LIKE = new OpDef<>(
            "full_like", 2, a -> NoAttrs.parse("full_like", a), (t, n, a, r) -> like("full_like", t, true, r), OpPattern.ELEMWISE,
            (in, a) -> {
                NDArray x = in.getFirst();
                return List.of(Movement.filled(x.dtype(), x.shape(), Movement.castScalar(in.get(1), x.dtype())));
            });

    static InitAttrs parse(String op, Attrs attrs, DType defaultDtype) {
        AttrReader r = new AttrReader(op, attrs);
        if (!r.has("shape")) throw new RelationException(op + ": attribute 'shape' is required");
        InitAttrs a = new InitAttrs(Args.boxed(r.longs("shape")), r.dtype("dtype", defaultDtype));
        r.finish();
        for (long d : a.shape()) {
            if (d < 0) throw new RelationException(op + ": shape " + a.shape() + " has a negative dim " + d);
        }
        return a;
    }

    private static int[] shape(InitAttrs a) {
        int[] s = new int[a.shape().size()];
        for (int i = 0; i < s.length; i++) s[i] = Math.toIntExact(a.shape().get(i));
        return s;
    }

    private static List<Dim> dims(InitAttrs a) {
        List<Dim> out = new ArrayList<>();
        for (long d : a.shape()) out.add(Dim.of(d));
        return out;
    }

    private static boolean init(List<Type> types, InitAttrs a, DType dtype, TypeReporter reporter) {
        reporter.assign(types.getLast(), new TensorType(dims(a), dtype == null ? a.dtype() : dtype));
        return true;
    }

    private static boolean fullRelation(List<Type> types, int numInputs, InitAttrs a, TypeReporter reporter) {
        TensorType value = Args.scalar("full", types, 0, "fill_value");
        if (value == null) return false;
        return init(types, a, a.dtype() == null ? value.dtype() : a.dtype(), reporter);
    }

    private static boolean like(String op, List<Type> types, boolean withValue, TypeReporter reporter) {
        TensorType data = Args.tensor(op, types, 0, "data");
        if (data == null) return false;
        if (withValue && Args.scalar(op, types, 1, "fill_value") == null) return false;
        reporter.assign(types.getLast(), data);
        return true;
    }
}
