package dev.relayfarm.types;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Dims;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.TypeReporter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Test-only operators, injected through {@link OpResolver} so these tests do not depend on (or
 * pollute) the real registry: a broadcasting {@code t.add}, {@code t.equal} (bool result),
 * {@code t.concat0} (symbolic first-dimension sum), {@code t.conv} (a channel check with a
 * conv2d-like message and a {@code groups} attribute) and {@code t.never} (never solvable).
 */
final class TestOps {
    private TestOps() {}

    record Groups(long groups) {}

    static final Map<String, OpDef<?>> OPS = Map.of(
            "t.add", new OpDef<>("t.add", 2, a -> NoAttrs.parse("t.add", a), (ts, n, a, r) -> broadcast(ts, r, null),
                    OpPattern.BROADCAST, (in, a) -> List.of()),
            "t.equal", new OpDef<>("t.equal", 2, a -> NoAttrs.parse("t.equal", a), (ts, n, a, r) -> broadcast(ts, r, DType.BOOL),
                    OpPattern.BROADCAST, (in, a) -> List.of()),
            "t.concat0", new OpDef<>("t.concat0", 2, a -> NoAttrs.parse("t.concat0", a), TestOps::concat0,
                    OpPattern.INJECTIVE, (in, a) -> List.of()),
            "t.conv", new OpDef<Groups>("t.conv", 2, a -> {
                        var reader = new dev.relayfarm.ops.AttrReader("t.conv", a);
                        long g = reader.integer("groups", 1);
                        reader.finish();
                        return new Groups(g);
                    }, TestOps::conv, OpPattern.OUT_ELEMWISE_FUSABLE, (in, a) -> List.of()),
            "t.never", new OpDef<>("t.never", -1, a -> NoAttrs.parse("t.never", a), (ts, n, a, r) -> false,
                    OpPattern.OPAQUE, (in, a) -> List.of()));

    static final OpResolver RESOLVER = name -> Optional.ofNullable(OPS.get(name));

    private static boolean broadcast(List<Type> ts, TypeReporter r, DType outType) {
        if (!(ts.get(0) instanceof TensorType a) || !(ts.get(1) instanceof TensorType b)) {
            if (ts.get(0) instanceof IncompleteType || ts.get(1) instanceof IncompleteType) return false;
            throw new RelationException("expected tensors, got " + ts.get(0) + " and " + ts.get(1));
        }
        if (!a.dtype().equals(b.dtype())) throw new RelationException("dtypes differ: " + a.dtype() + " vs " + b.dtype());
        if (a.rank() != b.rank()) throw new RelationException("ranks differ: " + a + " vs " + b);
        List<Dim> out = new ArrayList<>();
        for (int i = 0; i < a.rank(); i++) {
            Dim x = a.shape().get(i);
            Dim y = b.shape().get(i);
            if (x instanceof Dim.Any || y instanceof Dim.Any) out.add(Dim.ANY); // Any propagates
            else if (Dims.simplify(x).equals(Dims.simplify(y)) || y.equals(Dim.of(1))) out.add(x);
            else if (x.equals(Dim.of(1))) out.add(y);
            else throw new RelationException("shapes " + a + " and " + b + " do not broadcast at axis " + i);
        }
        r.assign(ts.get(2), new TensorType(out, outType == null ? a.dtype() : outType));
        return true;
    }

    private static boolean concat0(List<Type> ts, int n, NoAttrs attrs, TypeReporter r) {
        if (!(ts.get(0) instanceof TensorType a) || !(ts.get(1) instanceof TensorType b)) return false;
        List<Dim> out = new ArrayList<>(a.shape());
        out.set(0, Dims.add(a.shape().get(0), b.shape().get(0)));
        r.assign(ts.get(2), new TensorType(out, a.dtype()));
        return true;
    }

    private static boolean conv(List<Type> ts, int n, Groups attrs, TypeReporter r) {
        if (!(ts.get(0) instanceof TensorType data) || !(ts.get(1) instanceof TensorType weight)) return false;
        Dim c = data.shape().get(1);
        Dim i = weight.shape().get(1);
        if (!Dims.simplify(Dims.mul(i, Dim.of(attrs.groups()))).equals(Dims.simplify(c))) {
            throw new RelationException("input channels " + c + " (data) do not match weight " + dims(weight)
                    + " with groups=" + attrs.groups());
        }
        r.assign(ts.get(2), new TensorType(List.of(data.shape().get(0), weight.shape().get(0)), data.dtype()));
        return true;
    }

    private static String dims(TensorType t) {
        return t.shape().toString().replace('[', '(').replace(']', ')');
    }

    static AttrValue.IntValue intAttr(long v) {
        return new AttrValue.IntValue(v);
    }
}
