package dev.relayfarm.ops;

import static dev.relayfarm.ops.OpTestSupport.assertClose;
import static dev.relayfarm.ops.OpTestSupport.assertRelationError;
import static dev.relayfarm.ops.OpTestSupport.attrs;
import static dev.relayfarm.ops.OpTestSupport.bools;
import static dev.relayfarm.ops.OpTestSupport.defers;
import static dev.relayfarm.ops.OpTestSupport.f32;
import static dev.relayfarm.ops.OpTestSupport.i32;
import static dev.relayfarm.ops.OpTestSupport.infer;
import static dev.relayfarm.ops.OpTestSupport.nd;
import static dev.relayfarm.ops.OpTestSupport.run;
import static dev.relayfarm.ops.OpTestSupport.s;
import static dev.relayfarm.ops.OpTestSupport.tt;
import static dev.relayfarm.ops.OpTestSupport.vec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

class ElementwiseOpsTest {
    private static final DType F32 = DType.FLOAT32;
    private static final DType I8 = DType.INT8;
    private static final DType U8 = DType.UINT8;
    private static final DType I32 = DType.INT32;
    private static final double NAN = Double.NaN;
    private static final double INF = Double.POSITIVE_INFINITY;
    private static final double PI = Math.PI;

    /** One kernel check: op(inputs; attrs) must equal expected (values computed by hand). */
    private record Case(String op, Attrs attrs, List<NDArray> inputs, NDArray expected) {}

    private static final List<Case> CASES = new ArrayList<>();

    private static void k(String op, NDArray expected, NDArray... inputs) {
        CASES.add(new Case(op, Attrs.EMPTY, List.of(inputs), expected));
    }

    private static void k(String op, Attrs attrs, NDArray expected, NDArray... inputs) {
        CASES.add(new Case(op, attrs, List.of(inputs), expected));
    }

    static {
        // add: row broadcast, outer broadcast, scalar, int8/uint8 wrap, float16 and bfloat16 via float32.
        k("add", f32(s(2, 3), 11, 22, 33, 14, 25, 36), f32(s(2, 3), 1, 2, 3, 4, 5, 6), f32(10, 20, 30));
        k("add", f32(s(3, 2), 11, 21, 12, 22, 13, 23), f32(s(3, 1), 1, 2, 3), f32(s(1, 2), 10, 20));
        k("add", f32(s(2, 2), 1.5, 2.5, 3.5, 4.5), f32(s(2, 2), 1, 2, 3, 4), f32(s(), 0.5));
        k("add", f32(s(2, 2), 1.5, 2.5, 3.5, 4.5), f32(s(), 0.5), f32(s(2, 2), 1, 2, 3, 4));
        k("add", nd(I8, s(2), -56, 127), nd(I8, s(2), 100, -128), nd(I8, s(2), 100, -1));
        k("add", nd(U8, s(2), 44, 0), nd(U8, s(2), 200, 255), nd(U8, s(2), 100, 1));
        k("add", vec(DType.FLOAT16, 1.75, 2.75), vec(DType.FLOAT16, 1.5, 2.25), vec(DType.FLOAT16, 0.25, 0.5));
        k("add", vec(DType.BFLOAT16, 4, 2.5), vec(DType.BFLOAT16, 1, 2), vec(DType.BFLOAT16, 3, 0.5));
        k("add", vec(DType.FLOAT64, 0.30000000000000004), vec(DType.FLOAT64, 0.1), vec(DType.FLOAT64, 0.2));
        k("add", NDArray.fromLongs(DType.INT64, s(1), new long[] {Long.MIN_VALUE}),
                NDArray.fromLongs(DType.INT64, s(1), new long[] {Long.MAX_VALUE}),
                NDArray.fromLongs(DType.INT64, s(1), new long[] {1}));
        k("subtract", f32(4, -1), f32(5, 3), f32(1, 4));
        k("subtract", nd(U8, s(1), 255), nd(U8, s(1), 0), nd(U8, s(1), 1));
        k("multiply", f32(8, -3), f32(2, 3), f32(4, -1));
        k("multiply", i32(0, -6), i32(65536, 2), i32(65536, -3));
        k("divide", f32(3.5, -3.5, INF), f32(7, -7, 1), f32(2, 2, 0));
        k("divide", i32(3, -3, -3, 3), i32(7, -7, 7, -7), i32(2, 2, -2, -2));
        k("divide", nd(U8, s(1), 66), nd(U8, s(1), 200), nd(U8, s(1), 3));
        k("trunc_divide", i32(3, -3, -3, 3), i32(7, -7, 7, -7), i32(2, 2, -2, -2));
        k("floor_divide", i32(3, -4, -4, 3), i32(7, -7, 7, -7), i32(2, 2, -2, -2));
        k("floor_divide", f32(-4, 3), f32(-7, 7), f32(2, 2));
        k("floor_mod", i32(1, 1, -1, -1), i32(7, -7, 7, -7), i32(2, 2, -2, -2));
        k("floor_mod", f32(0.5, -1.5), f32(-7.5, 0.5), f32(2, -2));
        k("mod", i32(1, -1, 1, -1), i32(7, -7, 7, -7), i32(2, 2, -2, -2));
        k("mod", f32(-1.5), f32(-7.5), f32(2));
        k("trunc_mod", i32(1, -1, 1, -1), i32(7, -7, 7, -7), i32(2, 2, -2, -2));
        k("power", f32(8, 3), f32(2, 9), f32(3, 0.5));
        k("power", i32(1024, 27, -8, 0, 1, -1), i32(2, 3, -2, 2, 1, -1), i32(10, 3, 3, -1, -5, -3));
        k("maximum", f32(3, 5, NAN), f32(1, 5, NAN), f32(3, 2, 1));
        k("maximum", nd(U8, s(2), 200, 2), nd(U8, s(2), 200, 1), nd(U8, s(2), 100, 2));
        k("minimum", f32(1, 2), f32(1, 5), f32(3, 2));
        k("minimum", nd(U8, s(2), 100, 1), nd(U8, s(2), 200, 1), nd(U8, s(2), 100, 2));
        k("minimum", nd(I8, s(1), -1), nd(I8, s(1), -1), nd(I8, s(1), 1));
        k("logical_and", bools(1, 0, 0, 0), bools(1, 1, 0, 0), bools(1, 0, 1, 0));
        k("logical_or", bools(1, 1, 1, 0), bools(1, 1, 0, 0), bools(1, 0, 1, 0));
        k("logical_xor", bools(0, 1, 1, 0), bools(1, 1, 0, 0), bools(1, 0, 1, 0));
        k("logical_and", f32(1, 0), f32(2, 0.5), f32(-1, 0));
        k("bitwise_and", i32(8, 255), i32(12, -1), i32(10, 255));
        k("bitwise_or", i32(14, -1), i32(12, -1), i32(10, 255));
        k("bitwise_xor", i32(6, -256), i32(12, -1), i32(10, 255));
        k("bitwise_and", bools(1, 0), bools(1, 1), bools(1, 0));
        k("left_shift", nd(I8, s(2), 8, -128), nd(I8, s(2), 1, 64), nd(I8, s(2), 3, 1));
        k("right_shift", nd(I8, s(2), -4, 4), nd(I8, s(2), -16, 16), nd(I8, s(2), 2, 2));
        k("right_shift", nd(U8, s(1), 15), nd(U8, s(1), 240), nd(U8, s(1), 4));

        k("equal", bools(1, 0, 0), f32(1, 2, NAN), f32(1, 3, NAN));
        k("not_equal", bools(0, 1, 1), f32(1, 2, NAN), f32(1, 3, NAN));
        k("less", bools(1, 0, 0), f32(1, 2, 3), f32(2, 2, 2));
        k("less", bools(0, 1), nd(U8, s(2), 200, 1), nd(U8, s(2), 100, 2));
        k("less", bools(1), nd(I8, s(1), -56), nd(I8, s(1), 100));
        k("less_equal", bools(1, 1, 0), f32(1, 2, 3), f32(2, 2, 2));
        k("greater", bools(0, 0, 1), f32(1, 2, 3), f32(2, 2, 2));
        k("greater", bools(1), NDArray.fromLongs(DType.UINT64, s(1), new long[] {-1L}),
                NDArray.fromLongs(DType.UINT64, s(1), new long[] {1}));
        k("greater_equal", nd(DType.BOOL, s(2, 3), 0, 1, 1, 1, 1, 1), f32(s(2, 3), 1, 2, 3, 4, 5, 6), f32(2));

        k("negative", f32(-1, 2), f32(1, -2));
        k("negative", nd(I8, s(1), -128), nd(I8, s(1), -128));
        k("abs", f32(1.5, 2), f32(-1.5, 2));
        k("abs", i32(5, 5), i32(-5, 5));
        k("sign", f32(-1, 0, 1), f32(-3, 0, 2));
        k("sign", i32(-1, 0, 1), i32(-3, 0, 2));
        k("sign", nd(U8, s(2), 0, 1), nd(U8, s(2), 0, 200));
        k("floor", f32(1, -2), f32(1.5, -1.5));
        k("ceil", f32(2, -1), f32(1.5, -1.5));
        k("round", f32(1, 2, 3, -1, -3, 2, 0), f32(0.5, 1.5, 2.5, -0.5, -2.5, 2.4, 0.49999997));
        k("round", vec(DType.FLOAT64, 1, 0), vec(DType.FLOAT64, 0.5, 0.49999999999999994));
        k("round", i32(7), i32(7));
        k("trunc", f32(1, -1), f32(1.7, -1.7));
        k("logical_not", bools(0, 1), bools(1, 0));
        k("bitwise_not", nd(I8, s(2), -1, -6), nd(I8, s(2), 0, 5));
        k("bitwise_not", nd(U8, s(1), 250), nd(U8, s(1), 5));
        k("exp", f32(1, Math.E), f32(0, 1));
        k("exp", vec(DType.FLOAT16, 1, 2.71875), vec(DType.FLOAT16, 0, 1));
        k("log", f32(0, 1, Double.NEGATIVE_INFINITY), f32(1, Math.E, 0));
        k("log2", f32(3, -1, 1.5849625), f32(8, 0.5, 3));
        k("log10", f32(3, -2), f32(1000, 0.01));
        k("sqrt", f32(2, 1.4142135, NAN), f32(4, 2, -1));
        k("rsqrt", f32(0.5, 0.1), f32(4, 100));
        k("sigmoid", f32(0.5, 0.8807970779778823, 0.11920292202211755), f32(0, 2, -2));
        k("erf", vec(DType.FLOAT64, 0, 0.5204998778130465, 0.8427007929497149, -0.9953222650189527, 0.9999779095030014, 1),
                vec(DType.FLOAT64, 0, 0.5, 1, -2, 3, 7));
        k("erf", f32(0.1124629160182849), f32(0.1));
        k("tanh", f32(0.46211715726000974, -1), f32(0.5, -30));
        k("sinh", f32(1.1752011936438014), f32(1));
        k("cosh", f32(1.5430806348152437), f32(1));
        k("sin", f32(1, 0), f32(PI / 2, 0));
        k("cos", f32(1, -1), f32(0, PI));
        k("tan", f32(1), f32(PI / 4));
        k("asin", f32(PI / 2), f32(1));
        k("acos", f32(0, PI), f32(1, -1));
        k("atan", f32(PI / 4), f32(1));
        k("asinh", vec(DType.FLOAT64, 0.881373587019543, -0.881373587019543, 1e-20), vec(DType.FLOAT64, 1, -1, 1e-20));
        k("acosh", f32(1.3169578969248166, 0), f32(2, 1));
        k("atanh", f32(0.5493061443340549, INF), f32(0.5, 1));
        k("isnan", bools(1, 0, 0), f32(NAN, 1, INF));
        k("isnan", bools(0), i32(3));
        k("isinf", bools(1, 1, 0, 0), f32(INF, -INF, 1, NAN));
        k("isfinite", bools(0, 0, 1, 0), f32(INF, -INF, 1, NAN));
        k("isfinite", bools(1), i32(3));

        Attrs clip = attrs("a_min", -1.0, "a_max", 1.0);
        k("clip", clip, f32(-1, 0.5, 1), f32(-2, 0.5, 3));
        k("clip", attrs("a_min", -1.5, "a_max", 2.5), i32(-1, 0, 2), i32(-5, 0, 5));
        k("clip", attrs("a_min", 10, "a_max", 100), nd(U8, s(3), 10, 50, 100), nd(U8, s(3), 0, 50, 250));
        k("cast", attrs("dtype", "int8"), nd(I8, s(3), 1, -1, 0), f32(1.7, -1.7, 0.2));
        k("cast", attrs("dtype", "bool"), bools(0, 1, 1), f32(0, 0.5, -3));
        k("cast", attrs("dtype", "float16"), vec(DType.FLOAT16, 3, -2), i32(3, -2));
        k("cast", attrs("dtype", "uint8"), nd(U8, s(2), 1, 255), i32(257, -1));
        k("cast", attrs("dtype", "int32"), i32(255), nd(U8, s(1), 255));
        k("cast", attrs("dtype", "float32"), f32(1.8446744073709552e19), NDArray.fromLongs(DType.UINT64, s(1), new long[] {-1L}));
        k("where", f32(s(2, 3), 1, 2, 3, 0, 0, 0), nd(DType.BOOL, s(2, 1), 1, 0), f32(s(1, 3), 1, 2, 3), f32(s(), 0));
        k("where", i32(10, 2), f32(1, 0), i32(10, 20), i32(1, 2));
    }

    /** The relation family of every operator, which decides the generic relation checks below. */
    private enum Kind { BINARY, BINARY_INT, COMPARE, UNARY, UNARY_FLOAT, UNARY_INT, PREDICATE, CLIP, CAST, WHERE }

    private static final Map<String, Kind> KINDS = new LinkedHashMap<>();

    static {
        for (String op : List.of("add", "subtract", "multiply", "divide", "trunc_divide", "floor_divide", "floor_mod", "mod",
                "trunc_mod", "power", "maximum", "minimum", "logical_and", "logical_or", "logical_xor")) {
            KINDS.put(op, Kind.BINARY);
        }
        for (String op : List.of("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")) KINDS.put(op, Kind.BINARY_INT);
        for (String op : List.of("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")) KINDS.put(op, Kind.COMPARE);
        for (String op : List.of("negative", "abs", "sign", "floor", "ceil", "round", "trunc", "logical_not")) KINDS.put(op, Kind.UNARY);
        for (String op : List.of("exp", "log", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "erf", "tanh", "sinh", "cosh", "sin",
                "cos", "tan", "asin", "acos", "atan", "asinh", "acosh", "atanh")) {
            KINDS.put(op, Kind.UNARY_FLOAT);
        }
        KINDS.put("bitwise_not", Kind.UNARY_INT);
        for (String op : List.of("isnan", "isinf", "isfinite")) KINDS.put(op, Kind.PREDICATE);
        KINDS.put("clip", Kind.CLIP);
        KINDS.put("cast", Kind.CAST);
        KINDS.put("where", Kind.WHERE);
    }

    @Test
    void everyRegisteredOpHasKernelAndRelationTests() {
        Set<String> withKernel = new TreeSet<>();
        for (Case c : CASES) withKernel.add(c.op());
        List<String> missing = new ArrayList<>();
        for (OpDef<?> def : ElementwiseOps.defs()) {
            if (!withKernel.contains(def.name())) missing.add(def.name() + " (kernel)");
            if (!KINDS.containsKey(def.name())) missing.add(def.name() + " (relation)");
            assertSame(def, OpRegistry.get(def.name()), def.name() + " is registered");
        }
        assertEquals(List.of(), missing, "operators without tests");
        assertEquals(KINDS.size(), ElementwiseOps.defs().size(), "test table lists an op that is not registered");
    }

    @TestFactory
    Stream<DynamicTest> kernels() {
        return CASES.stream().map(c -> DynamicTest.dynamicTest(c.op() + " " + c.inputs(),
                () -> assertClose(c.expected(), run(c.op(), c.attrs(), c.inputs().toArray(NDArray[]::new)), c.op())));
    }

    @TestFactory
    Stream<DynamicTest> relations() {
        return KINDS.entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey() + " " + e.getValue(),
                () -> checkRelation(e.getKey(), e.getValue())));
    }

    private static void checkRelation(String op, Kind kind) {
        Type unknown = IncompleteType.fresh();
        Type tuple = new TupleType(List.of(tt(F32), tt(F32)));
        switch (kind) {
            case BINARY, BINARY_INT, COMPARE -> {
                DType t = kind == Kind.BINARY_INT ? I32 : F32;
                DType out = kind == Kind.COMPARE ? DType.BOOL : t;
                assertEquals(tt(out, "2", "3"), infer(op, Attrs.EMPTY, tt(t, "2", "3"), tt(t, "3")));
                assertEquals(tt(out, "4", "?", "n", "3", "?"),
                        infer(op, Attrs.EMPTY, tt(t, "?", "1", "n", "3", "?"), tt(t, "4", "?", "n", "1", "?")));
                assertEquals(tt(out, "n", "?"), infer(op, Attrs.EMPTY, tt(t, "1", "?"), tt(t, "n", "1")));
                assertEquals(tt(out), infer(op, Attrs.EMPTY, tt(t), tt(t)));
                assertTrue(defers(op, Attrs.EMPTY, unknown, tt(t, "3")));
                assertTrue(defers(op, Attrs.EMPTY, tt(t, "3"), unknown));
                DType other = t == F32 ? I32 : DType.INT64;
                assertRelationError(op + ": dtypes " + t + " and " + other + " do not match", op, Attrs.EMPTY, tt(t, "3"), tt(other, "3"));
                assertRelationError(op + ": shapes (2, 3) and (4, 3) are not broadcast-compatible at dim 0 (2 vs 4)",
                        op, Attrs.EMPTY, tt(t, "2", "3"), tt(t, "4", "3"));
                assertRelationError(op + ": shapes (n, 3) and (m, 3) are not broadcast-compatible at dim 0 (n vs m)",
                        op, Attrs.EMPTY, tt(t, "n", "3"), tt(t, "m", "3"));
                assertRelationError(op + ": unknown attribute 'axis'", op, attrs("axis", 1), tt(t, "3"), tt(t, "3"));
                if (kind == Kind.BINARY_INT) {
                    assertRelationError(op + ": expects " + (op.contains("shift") ? "an integer tensor" : "an integer or bool tensor")
                            + ", got float32", op, Attrs.EMPTY, tt(F32, "3"), tt(F32, "3"));
                }
            }
            case UNARY, UNARY_FLOAT, UNARY_INT, PREDICATE -> {
                DType t = kind == Kind.UNARY_INT ? I32 : F32;
                DType out = kind == Kind.PREDICATE ? DType.BOOL : t;
                assertEquals(tt(out, "?", "n", "3"), infer(op, Attrs.EMPTY, tt(t, "?", "n", "3")));
                assertTrue(defers(op, Attrs.EMPTY, unknown));
                assertRelationError(op + ": expected a tensor, got (float32, float32)", op, Attrs.EMPTY, tuple);
                assertRelationError(op + ": unknown attribute 'dtype'", op, attrs("dtype", "float32"), tt(t, "3"));
                if (kind == Kind.UNARY_FLOAT) {
                    assertRelationError(op + ": expects a floating-point tensor, got int32", op, Attrs.EMPTY, tt(I32, "3"));
                    assertThrows(IllegalArgumentException.class, () -> run(op, Attrs.EMPTY, i32(1)));
                }
                if (kind == Kind.UNARY_INT) {
                    assertRelationError(op + ": expects an integer tensor, got float32", op, Attrs.EMPTY, tt(F32, "3"));
                }
                if (kind == Kind.UNARY || kind == Kind.PREDICATE) {
                    assertEquals(tt(kind == Kind.PREDICATE ? DType.BOOL : U8, "2"), infer(op, Attrs.EMPTY, tt(U8, "2")));
                }
            }
            case CLIP -> {
                Attrs a = attrs("a_min", 0, "a_max", 6.0);
                assertEquals(tt(F32, "?", "n"), infer(op, a, tt(F32, "?", "n")));
                assertEquals(tt(I8, "2"), infer(op, a, tt(I8, "2")));
                assertTrue(defers(op, a, unknown));
                assertRelationError("clip: attribute 'a_max' is required", op, attrs("a_min", 0), tt(F32, "3"));
                assertRelationError("clip: attribute 'a_min' must be a number, got \"x\"", op, attrs("a_min", "x", "a_max", 1.0), tt(F32, "3"));
                assertRelationError("clip: unknown attribute 'amax'", op, attrs("a_min", 0, "a_max", 1, "amax", 2), tt(F32, "3"));
            }
            case CAST -> {
                assertEquals(tt(DType.FLOAT16, "?", "n"), infer(op, attrs("dtype", "float16"), tt(F32, "?", "n")));
                assertTrue(defers(op, attrs("dtype", "int8"), unknown));
                assertRelationError("cast: attribute 'dtype' is required", op, Attrs.EMPTY, tt(F32, "3"));
                assertRelationError("cast: attribute 'dtype': unknown dtype 'floaty'", op, attrs("dtype", "floaty"), tt(F32, "3"));
                assertRelationError("cast: expected a tensor, got (float32, float32)", op, attrs("dtype", "int8"), tuple);
            }
            case WHERE -> {
                assertEquals(tt(F32, "2", "n", "3"), infer(op, Attrs.EMPTY, tt(DType.BOOL, "2", "1", "1"), tt(F32, "n", "1"), tt(F32, "3")));
                assertEquals(tt(F32, "?", "4"), infer(op, Attrs.EMPTY, tt(DType.BOOL, "?", "1"), tt(F32, "4"), tt(F32)));
                assertTrue(defers(op, Attrs.EMPTY, tt(DType.BOOL), unknown, tt(F32)));
                assertRelationError("where: dtypes float32 and int32 do not match", op, Attrs.EMPTY, tt(DType.BOOL), tt(F32), tt(I32));
                assertRelationError("where: shapes (2) and (3) are not broadcast-compatible at dim 0 (2 vs 3)",
                        op, Attrs.EMPTY, tt(DType.BOOL, "2"), tt(F32, "3"), tt(F32, "3"));
            }
        }
    }

    @Test
    void patternsFollowRelay() {
        for (OpDef<?> def : ElementwiseOps.defs()) {
            OpPattern expected = switch (KINDS.get(def.name())) {
                case BINARY, BINARY_INT, COMPARE, WHERE -> OpPattern.BROADCAST;
                case UNARY, UNARY_FLOAT, UNARY_INT, PREDICATE, CLIP, CAST -> OpPattern.ELEMWISE;
            };
            assertEquals(expected, def.pattern(), def.name());
        }
    }

    @Test
    void kernelRejectsMismatchedDtypesAndShapes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> run("add", Attrs.EMPTY, f32(1), i32(1)));
        assertEquals("add: dtypes float32 and int32 do not match", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> run("multiply", Attrs.EMPTY, f32(1, 2), f32(1, 2, 3)));
        assertEquals("multiply: shapes (2) and (3) are not broadcast-compatible at dim 0 (2 vs 3)", e.getMessage());
    }

    @Test
    void integerDivisionByZeroIsAnError() {
        ArithmeticException e = assertThrows(ArithmeticException.class, () -> run("floor_mod", Attrs.EMPTY, i32(1), i32(0)));
        assertEquals("floor_mod: integer division by zero", e.getMessage());
    }

    @Test
    void broadcastingWalksEveryLayout() {
        // (2,1,3) + (4,1): exercises the general strided walk with stride-0 dims on both sides.
        double[] a = {0, 1, 2, 3, 4, 5};
        double[] b = {100, 200, 300, 400};
        double[] expected = new double[2 * 4 * 3];
        for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) for (int k = 0; k < 3; k++) expected[(i * 4 + j) * 3 + k] = a[i * 3 + k] + b[j];
        assertClose(f32(s(2, 4, 3), expected), run("add", Attrs.EMPTY, f32(s(2, 1, 3), a), f32(s(4, 1), b)), "add");
        // Empty tensors broadcast to empty results without touching any element.
        assertEquals(0, run("add", Attrs.EMPTY, f32(s(0, 3)), f32(3, 1, 2)).size());
    }

    @Test
    void kernelsDoNotModifyInputs() {
        NDArray x = f32(1, -2);
        run("negative", Attrs.EMPTY, x);
        run("add", Attrs.EMPTY, x, x);
        assertClose(f32(1, -2), x, "input");
    }
}
