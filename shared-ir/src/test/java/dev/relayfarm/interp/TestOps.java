package dev.relayfarm.interp;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleBinaryOperator;

/**
 * Small operators injected into the interpreter by tests, so interpreter semantics are tested
 * independently of the real operator library: scalar-or-same-shape arithmetic and comparisons, an
 * operator with two results, one taking a tuple, one that fails and one that counts its calls.
 */
final class TestOps {
    final AtomicInteger counted = new AtomicInteger();
    private final Map<String, OpDef<?>> ops = new HashMap<>();

    TestOps() {
        binary("add", Double::sum, false);
        binary("subtract", (a, b) -> a - b, false);
        binary("multiply", (a, b) -> a * b, false);
        binary("equal", (a, b) -> a == b ? 1 : 0, true);
        binary("less", (a, b) -> a < b ? 1 : 0, true);
        ops.put("test.split2", new OpDef<>("test.split2", 1, a -> NoAttrs.parse("test.split2", a),
                (types, n, attrs, r) -> {
                    r.assign(types.get(1), new TupleType(List.of(types.get(0), types.get(0))));
                    return true;
                },
                OpPattern.OPAQUE, (in, attrs) -> List.of(in.get(0), in.get(0))));
        ops.put("test.one_tuple", new OpDef<>("test.one_tuple", 1, a -> NoAttrs.parse("test.one_tuple", a),
                (types, n, attrs, r) -> {
                    r.assign(types.get(1), new TupleType(List.of(types.get(0))));
                    return true;
                },
                OpPattern.OPAQUE, (in, attrs) -> List.of(in.get(0))));
        ops.put("test.sum_all", new OpDef<>("test.sum_all", 1, a -> NoAttrs.parse("test.sum_all", a),
                (types, n, attrs, r) -> true, OpPattern.OPAQUE, (in, attrs) -> {
                    double s = 0;
                    for (NDArray x : in) for (int i = 0; i < x.elementCount(); i++) s += x.getDouble(i);
                    return List.of(NDArray.scalar((float) s));
                }));
        ops.put("test.fail", new OpDef<>("test.fail", 1, a -> NoAttrs.parse("test.fail", a),
                (types, n, attrs, r) -> true, OpPattern.OPAQUE, (in, attrs) -> {
                    throw new IllegalArgumentException("input must be positive");
                }));
        ops.put("test.counted", new OpDef<>("test.counted", 1, a -> NoAttrs.parse("test.counted", a),
                (types, n, attrs, r) -> true, OpPattern.OPAQUE, (in, attrs) -> {
                    counted.incrementAndGet();
                    return List.of(in.get(0));
                }));
    }

    private void binary(String name, DoubleBinaryOperator f, boolean compare) {
        ops.put(name, new OpDef<>(name, 2, a -> NoAttrs.parse(name, a),
                (List<Type> types, int n, NoAttrs attrs, dev.relayfarm.ops.TypeReporter r) -> true,
                OpPattern.BROADCAST, (in, attrs) -> {
                    NDArray a = in.get(0);
                    NDArray b = in.get(1);
                    NDArray big = a.elementCount() >= b.elementCount() ? a : b;
                    if (a.elementCount() != b.elementCount() && Math.min(a.elementCount(), b.elementCount()) != 1) {
                        throw new IllegalArgumentException("shapes do not broadcast");
                    }
                    NDArray out = NDArray.zeros(compare ? DType.BOOL : big.dtype(), big.shape());
                    for (int i = 0; i < out.elementCount(); i++) {
                        double x = a.getDouble(a.elementCount() == 1 ? 0 : i);
                        double y = b.getDouble(b.elementCount() == 1 ? 0 : i);
                        out.setDouble(i, f.applyAsDouble(x, y));
                    }
                    return List.of(out);
                }));
    }

    /** Test operators first, then the real registry (for names the tests do not define). */
    OpDef<?> resolve(String name) {
        OpDef<?> def = ops.get(name);
        return def != null ? def : OpRegistry.get(name);
    }
}
