package dev.relayfarm.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.RelationException;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** Small builders and checks shared by the operator tests: arrays, tensor types, attrs, tolerant comparison. */
final class OpTestSupport {
    private OpTestSupport() {}

    static int[] s(int... shape) {
        return shape;
    }

    static NDArray nd(DType t, int[] shape, double... values) {
        return NDArray.fromDoubles(t, shape, values);
    }

    static NDArray f32(int[] shape, double... values) {
        return nd(DType.FLOAT32, shape, values);
    }

    static NDArray f32(double... values) {
        return nd(DType.FLOAT32, s(values.length), values);
    }

    static NDArray i32(double... values) {
        return nd(DType.INT32, s(values.length), values);
    }

    static NDArray vec(DType t, double... values) {
        return nd(t, s(values.length), values);
    }

    static NDArray bools(double... values) {
        return nd(DType.BOOL, s(values.length), values);
    }

    /** A tensor type from a spec like "?", "n", "3": {@code tt(FLOAT32, "?", "1", "n", "3")}. */
    static TensorType tt(DType t, String... dims) {
        List<Dim> shape = new ArrayList<>();
        for (String d : dims) {
            if (d.equals("?")) shape.add(Dim.ANY);
            else if (Character.isDigit(d.charAt(0))) shape.add(Dim.of(Long.parseLong(d)));
            else shape.add(Dim.sym(d));
        }
        return new TensorType(shape, t);
    }

    static Attrs attrs(Object... kv) {
        Attrs a = Attrs.EMPTY;
        for (int i = 0; i < kv.length; i += 2) {
            Object v = kv[i + 1];
            AttrValue av = switch (v) {
                case AttrValue x -> x;
                case Integer x -> AttrValue.of(x.longValue());
                case Long x -> AttrValue.of(x);
                case Double x -> AttrValue.of(x);
                case Boolean x -> AttrValue.of(x);
                case String x -> AttrValue.of(x);
                case int[] x -> AttrValue.ints(Arrays.stream(x).asLongStream().toArray());
                default -> throw new IllegalArgumentException("attr value " + v);
            };
            a = a.with((String) kv[i], av);
        }
        return a;
    }

    static Type infer(String op, Attrs attrs, Type... inputs) {
        Optional<Type> out = OpRegistry.get(op).inferOutput(List.of(inputs), attrs);
        assertTrue(out.isPresent(), op + " deferred on " + List.of(inputs));
        return out.get();
    }

    static boolean defers(String op, Attrs attrs, Type... inputs) {
        return OpRegistry.get(op).inferOutput(List.of(inputs), attrs).isEmpty();
    }

    static void assertRelationError(String expectedMessage, String op, Attrs attrs, Type... inputs) {
        RelationException e = assertThrows(RelationException.class,
                () -> OpRegistry.get(op).inferOutput(List.of(inputs), attrs));
        assertEquals(expectedMessage, e.getMessage());
    }

    static NDArray run(String op, Attrs attrs, NDArray... inputs) {
        List<NDArray> out = OpRegistry.get(op).compute(List.of(inputs), attrs);
        assertEquals(1, out.size());
        return out.get(0);
    }

    /** Same dtype and shape; floats within a dtype-sized relative tolerance (NaN equals NaN), integers exact. */
    static void assertClose(NDArray expected, NDArray actual, String what) {
        assertEquals(expected.dtype(), actual.dtype(), what + ": dtype");
        assertArrayEquals(expected.shape(), actual.shape(), what + ": shape");
        double tol = switch (expected.dtype().bits()) {
            case 16 -> 1e-2;
            case 32 -> 2e-6;
            default -> 1e-12;
        };
        for (int i = 0; i < expected.elementCount(); i++) {
            if (expected.dtype().isFloat()) {
                double e = expected.getDouble(i);
                double a = actual.getDouble(i);
                boolean ok = Double.isNaN(e) ? Double.isNaN(a)
                        : e == a || Math.abs(e - a) <= tol * Math.max(1, Math.abs(e));
                assertTrue(ok, what + ": element " + i + " expected " + e + " but was " + a + " in " + actual);
            } else {
                assertEquals(expected.getLong(i), actual.getLong(i), what + ": element " + i + " of " + actual);
            }
        }
    }
}
