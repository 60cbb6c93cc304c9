package dev.relayfarm.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/** Shorthands for operator tests: types, attributes, arrays and tolerant comparison. */
final class OpTesting {
    private OpTesting() {}

    /** A float32 tensor type; dims are Integers, "?" (Any) or a symbol name. */
    static TensorType f32(Object... dims) {
        return tensor(DType.FLOAT32, dims);
    }

    static TensorType tensor(DType dtype, Object... dims) {
        List<Dim> shape = new ArrayList<>();
        for (Object d : dims) {
            shape.add(switch (d) {
                case Integer i -> Dim.of(i);
                case String s when s.equals("?") -> Dim.ANY;
                case String s -> Dim.sym(s);
                default -> throw new IllegalArgumentException(String.valueOf(d));
            });
        }
        return new TensorType(shape, dtype);
    }

    static IncompleteType hole() {
        return IncompleteType.fresh();
    }

    /** Key/value pairs; values are int[] (list), Integer, Double, String, Boolean or null (None). */
    static Attrs attrs(Object... kv) {
        Map<String, AttrValue> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], value(kv[i + 1]));
        return new Attrs(m);
    }

    static AttrValue value(Object v) {
        return switch (v) {
            case null -> AttrValue.NONE;
            case int[] a -> AttrValue.ints(Arrays.stream(a).asLongStream().toArray());
            case int[][] a -> new AttrValue.ListValue(Arrays.stream(a).map(OpTesting::value).toList());
            case double[] a -> new AttrValue.ListValue(Arrays.stream(a).mapToObj(AttrValue::of).toList());
            case Integer i -> AttrValue.of((long) i);
            case Double d -> AttrValue.of(d);
            case String s -> AttrValue.of(s);
            case Boolean b -> AttrValue.of(b);
            default -> throw new IllegalArgumentException(String.valueOf(v));
        };
    }

    static int[] ints(int... v) {
        return v;
    }

    static Type infer(String op, Attrs attrs, Type... inputs) {
        Optional<Type> t = OpRegistry.get(op).inferOutput(List.of(inputs), attrs);
        return t.orElseThrow(() -> new AssertionError(op + " deferred on " + Arrays.toString(inputs)));
    }

    static String inferText(String op, Attrs attrs, Type... inputs) {
        return infer(op, attrs, inputs).toString();
    }

    static boolean defers(String op, Attrs attrs, Type... inputs) {
        return OpRegistry.get(op).inferOutput(List.of(inputs), attrs).isEmpty();
    }

    static String relationError(String op, Attrs attrs, Type... inputs) {
        return assertThrows(RelationException.class, () -> OpRegistry.get(op).inferOutput(List.of(inputs), attrs)).getMessage();
    }

    static NDArray arr(int[] shape, double... values) {
        return NDArray.fromDoubles(DType.FLOAT32, shape, values);
    }

    static NDArray arr(DType dtype, int[] shape, double... values) {
        return NDArray.fromDoubles(dtype, shape, values);
    }

    static NDArray random(Random rnd, int... shape) {
        float[] f = new float[NDArray.elementCount(DType.FLOAT32, shape)];
        for (int i = 0; i < f.length; i++) f[i] = rnd.nextFloat() * 2 - 1;
        return NDArray.wrap(DType.FLOAT32, shape, f);
    }

    static List<NDArray> run(String op, Attrs attrs, NDArray... inputs) {
        return OpRegistry.get(op).compute(List.of(inputs), attrs);
    }

    static NDArray run1(String op, Attrs attrs, NDArray... inputs) {
        List<NDArray> out = run(op, attrs, inputs);
        assertEquals(1, out.size(), op + " returned " + out.size() + " arrays");
        return out.getFirst();
    }

    /** Same shape and every element within {@code tol} (absolute plus relative to the magnitude). */
    static void assertClose(NDArray expected, NDArray actual, double tol) {
        assertEquals(expected.dtype(), actual.dtype(), "dtype");
        assertArrayEquals(expected.shape(), actual.shape(), "shape");
        for (int i = 0; i < expected.size(); i++) {
            double e = expected.getDouble(i), a = actual.getDouble(i);
            if (Double.isNaN(e) && Double.isNaN(a)) continue;
            if (!(Math.abs(e - a) <= tol * (1 + Math.abs(e)))) {
                fail("element " + i + ": expected " + e + " but got " + a + " (expected " + expected + ", actual " + actual + ")");
            }
        }
    }

    static void assertValues(NDArray actual, int[] shape, double... expected) {
        assertClose(arr(actual.dtype(), shape, expected), actual, 1e-6);
    }
}
