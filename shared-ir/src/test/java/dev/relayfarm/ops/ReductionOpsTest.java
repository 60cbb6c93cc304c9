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
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IncompleteType;
import dev.relayfarm.ir.NDArray;
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

class ReductionOpsTest {
    private static final DType F32 = DType.FLOAT32;
    private static final DType I32 = DType.INT32;
    private static final DType U8 = DType.UINT8;

    private record Case(String op, Attrs attrs, List<NDArray> inputs, NDArray expected) {}

    private static final List<Case> CASES = new ArrayList<>();

    private static void k(String op, Attrs attrs, NDArray expected, NDArray... inputs) {
        CASES.add(new Case(op, attrs, List.of(inputs), expected));
    }

    private static NDArray x23() {
        return f32(s(2, 3), 1, 2, 3, 4, 5, 6);
    }

    static {
        Attrs none = Attrs.EMPTY;
        k("sum", none, f32(s(), 21), x23());
        k("sum", attrs("axis", s(1)), f32(6, 15), x23());
        k("sum", attrs("axis", s(0), "keepdims", true), f32(s(1, 3), 5, 7, 9), x23());
        k("sum", attrs("axis", s(-1), "exclude", true), f32(5, 7, 9), x23());
        k("sum", attrs("axis", new int[0]), f32(s(), 21), x23());
        k("sum", none, f32(s(), 2.5), f32(s(), 2.5));
        k("sum", none, nd(DType.INT8, s(), -56), nd(DType.INT8, s(2), 100, 100));
        k("sum", none, nd(U8, s(), 44), nd(U8, s(2), 200, 100));
        k("sum", attrs("axis", s(1)), nd(DType.FLOAT16, s(2), 3, 7), nd(DType.FLOAT16, s(2, 2), 1, 2, 3, 4));
        k("sum", attrs("axis", s(0, 2)), f32(1 + 2 + 5 + 6, 3 + 4 + 7 + 8), f32(s(2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8));
        k("mean", attrs("axis", s(1)), f32(2, 5), x23());
        k("mean", none, nd(DType.FLOAT64, s(), 3.5), vec(DType.FLOAT64, 1, 2, 3, 4, 5, 6));
        k("mean", none, nd(I32, s(), 1), i32(1, 2));
        k("mean", none, nd(I32, s(), -1), i32(-1, -2));
        k("max", attrs("axis", s(0)), f32(4, 5, 6), x23());
        k("max", attrs("keepdims", true), f32(s(1, 1), 6), x23());
        k("max", none, nd(U8, s(), 200), nd(U8, s(2), 200, 100));
        k("max", none, nd(DType.INT8, s(), -3), nd(DType.INT8, s(2), -5, -3));
        k("min", attrs("axis", s(1)), f32(1, 4), x23());
        k("min", none, nd(U8, s(), 100), nd(U8, s(2), 200, 100));
        k("prod", attrs("axis", s(1)), f32(6, 120), x23());
        k("prod", none, nd(I32, s(), 0), i32(65536, 65536));
        k("all", attrs("axis", s(1)), bools(0, 1), nd(DType.BOOL, s(2, 2), 1, 0, 1, 1));
        k("any", attrs("axis", s(1)), bools(1, 0), nd(DType.BOOL, s(2, 2), 1, 0, 0, 0));
        k("argmax", attrs("axis", s(1)), i32(1, 0), f32(s(2, 3), 1, 5, 5, 7, 2, 7));
        k("argmax", attrs("axis", s(1), "select_last_index", true), i32(2, 2), f32(s(2, 3), 1, 5, 5, 7, 2, 7));
        k("argmax", none, nd(I32, s(), 3), f32(s(2, 3), 1, 5, 5, 7, 2, 7));
        k("argmax", attrs("axis", s(0), "keepdims", true), nd(I32, s(1, 3), 1, 0, 1), f32(s(2, 3), 1, 5, 5, 7, 2, 7));
        k("argmax", attrs("axis", s(0, 2)), i32(0, 3), f32(s(2, 2, 2), 9, 1, 2, 3, 4, 5, 6, 7));
        k("argmax", none, nd(I32, s(), 1), nd(U8, s(2), 1, 200));
        k("argmax", none, nd(I32, s(), 0), f32(Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY));
        k("argmin", attrs("axis", s(1)), i32(0), f32(s(1, 3), 1, 5, 1));
        k("argmin", attrs("axis", s(1), "select_last_index", true), i32(2), f32(s(1, 3), 1, 5, 1));
        k("argmin", attrs("axis", s(-1)), i32(1, 0), nd(DType.INT64, s(2, 2), 3, -9, -4, 8));
        NDArray data = f32(s(2, 3), 1, 2, 3, 4, 5, 9);
        NDArray mean = f32(s(2, 1), 2, 6);
        k("variance", attrs("axis", s(1)), f32(2.0 / 3, 14.0 / 3), data, mean);
        k("variance", attrs("axis", s(1), "unbiased", true, "keepdims", true), f32(s(2, 1), 1, 7), data, mean);
        k("variance", none, f32(s(), 1.25), f32(s(2, 2), 1, 2, 3, 4), f32(s(1, 1), 2.5));
        k("variance", attrs("axis", s(1)), i32(4), nd(I32, s(1, 2), 1, 5), nd(I32, s(1, 1), 3));
        k("std", attrs("axis", s(1)), f32(Math.sqrt(2.0 / 3), Math.sqrt(14.0 / 3)), data, mean);
        k("std", attrs("axis", s(1), "unbiased", true), f32(1, Math.sqrt(7)), data, mean);
    }

    private enum Kind { REDUCE, BOOL_REDUCE, ARG, VARIANCE }

    private static final Map<String, Kind> KINDS = new LinkedHashMap<>();

    static {
        for (String op : List.of("sum", "mean", "max", "min", "prod")) KINDS.put(op, Kind.REDUCE);
        KINDS.put("all", Kind.BOOL_REDUCE);
        KINDS.put("any", Kind.BOOL_REDUCE);
        KINDS.put("argmax", Kind.ARG);
        KINDS.put("argmin", Kind.ARG);
        KINDS.put("variance", Kind.VARIANCE);
        KINDS.put("std", Kind.VARIANCE);
    }

    @Test
    void everyRegisteredOpHasKernelAndRelationTests() {
        Set<String> withKernel = new TreeSet<>();
        for (Case c : CASES) withKernel.add(c.op());
        List<String> missing = new ArrayList<>();
        for (OpDef<?> def : ReductionOps.defs()) {
            if (!withKernel.contains(def.name())) missing.add(def.name() + " (kernel)");
            if (!KINDS.containsKey(def.name())) missing.add(def.name() + " (relation)");
            assertEquals(OpPattern.COMM_REDUCE, def.pattern(), def.name());
            assertEquals(def, OpRegistry.get(def.name()), def.name() + " is registered");
        }
        assertEquals(List.of(), missing, "operators without tests");
        assertEquals(KINDS.size(), ReductionOps.defs().size(), "test table lists an op that is not registered");
    }

    @TestFactory
    Stream<DynamicTest> kernels() {
        return CASES.stream().map(c -> DynamicTest.dynamicTest(c.op() + " " + c.attrs() + " " + c.inputs(),
                () -> assertClose(c.expected(), run(c.op(), c.attrs(), c.inputs().toArray(NDArray[]::new)), c.op())));
    }

    @TestFactory
    Stream<DynamicTest> relations() {
        return KINDS.entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey() + " " + e.getValue(),
                () -> checkRelation(e.getKey(), e.getValue())));
    }

    private static void checkRelation(String op, Kind kind) {
        DType t = kind == Kind.BOOL_REDUCE ? DType.BOOL : F32;
        DType out = kind == Kind.ARG ? I32 : t;
        boolean twoInputs = kind == Kind.VARIANCE;
        // The mean given to variance/std: the keepdims mean over the same axes (Relay's relay.variance).
        java.util.function.BiFunction<Attrs, String[], dev.relayfarm.ir.Type[]> args = (a, meanDims) -> twoInputs
                ? new dev.relayfarm.ir.Type[] {tt(t, "?", "n", "3"), tt(t, meanDims)}
                : new dev.relayfarm.ir.Type[] {tt(t, "?", "n", "3")};
        assertEquals(tt(out, "?", "3"), infer(op, attrs("axis", s(1)), args.apply(null, new String[] {"?", "1", "3"})));
        assertEquals(tt(out, "?", "1", "3"), infer(op, attrs("axis", s(1), "keepdims", true), args.apply(null, new String[] {"?", "1", "3"})));
        assertEquals(tt(out, "?", "n"), infer(op, attrs("axis", s(-1)), args.apply(null, new String[] {"?", "n", "1"})));
        assertEquals(tt(out, "n"), infer(op, attrs("axis", s(1), "exclude", true), args.apply(null, new String[] {"1", "n", "1"})));
        assertEquals(tt(out), infer(op, Attrs.EMPTY, args.apply(null, new String[] {"1", "1", "1"})));
        assertEquals(tt(out), infer(op, attrs("axis", AttrValue.NONE), args.apply(null, new String[] {"1", "1", "1"})));
        assertEquals(tt(out), infer(op, attrs("axis", new int[0]), args.apply(null, new String[] {"1", "1", "1"})));
        assertEquals(tt(out, "1", "1", "1"), infer(op, attrs("keepdims", true), args.apply(null, new String[] {"1", "1", "1"})));
        dev.relayfarm.ir.Type[] good = args.apply(null, new String[] {"1", "1", "1"});
        assertRelationError(op + ": axis 5 is out of range for rank 3 (must be in [-3, 2])", op, attrs("axis", s(5)), good);
        assertRelationError(op + ": axis -4 is out of range for rank 3 (must be in [-3, 2])", op, attrs("axis", s(0, -4)), good);
        assertRelationError(op + ": axis 1 is listed twice in [1, -2]", op, attrs("axis", s(1, -2)), good);
        assertRelationError(op + ": unknown attribute 'keepdim'", op, attrs("keepdim", true), good);
        assertRelationError(op + ": attribute 'axis' must be a list of integers, got \"x\"", op, attrs("axis", "x"), good);
        assertRelationError(op + ": attribute 'keepdims' must be a boolean, got \"yes\"", op, attrs("keepdims", "yes"), good);
        assertRelationError(op + ": expected a tensor, got (float32,)", op, Attrs.EMPTY,
                twoInputs ? new dev.relayfarm.ir.Type[] {new dev.relayfarm.ir.TupleType(List.of(tt(F32))), tt(F32)}
                        : new dev.relayfarm.ir.Type[] {new dev.relayfarm.ir.TupleType(List.of(tt(F32)))});
        dev.relayfarm.ir.Type[] unknown = twoInputs
                ? new dev.relayfarm.ir.Type[] {IncompleteType.fresh(), tt(t, "1")}
                : new dev.relayfarm.ir.Type[] {IncompleteType.fresh()};
        assertEquals(true, defers(op, Attrs.EMPTY, unknown));
        switch (kind) {
            case REDUCE -> assertEquals(tt(I32, "2"), infer(op, attrs("axis", s(0)), tt(I32, "4", "2")));
            case BOOL_REDUCE -> assertRelationError(op + ": expects a bool tensor, got float32", op, Attrs.EMPTY, tt(F32, "3"));
            case ARG -> {
                assertEquals(tt(I32, "2"), infer(op, attrs("axis", s(0), "select_last_index", true), tt(DType.INT8, "4", "2")));
                assertRelationError(op + ": input must have rank >= 1, got a scalar", op, Attrs.EMPTY, tt(F32));
            }
            case VARIANCE -> {
                assertTrue(defers(op, Attrs.EMPTY, tt(F32, "3"), IncompleteType.fresh()));
                assertRelationError(op + ": mean must have the rank of data (2), got shape (4)", op, attrs("axis", s(1)),
                        tt(F32, "4", "3"), tt(F32, "4"));
                assertRelationError(op + ": dtypes float32 and float64 do not match", op, attrs("axis", s(1)),
                        tt(F32, "4", "3"), tt(DType.FLOAT64, "4", "1"));
                assertRelationError(op + ": shapes (4, 3) and (2, 1) are not broadcast-compatible at dim 0 (4 vs 2)", op,
                        attrs("axis", s(1)), tt(F32, "4", "3"), tt(F32, "2", "1"));
                assertRelationError(op + ": unknown attribute 'select_last_index'", op, attrs("select_last_index", true),
                        tt(F32, "4", "3"), tt(F32, "1", "1"));
                if (op.equals("std")) {
                    assertRelationError("std: expects a floating-point tensor, got int32", op, Attrs.EMPTY, tt(I32, "3"), tt(I32, "1"));
                } else {
                    assertEquals(tt(I32), infer(op, Attrs.EMPTY, tt(I32, "3"), tt(I32, "1")));
                }
            }
        }
    }

    private static void assertTrue(boolean b) {
        org.junit.jupiter.api.Assertions.assertTrue(b);
    }

    @Test
    void kernelErrors() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> run("all", Attrs.EMPTY, f32(1)));
        assertEquals("all: expects a bool tensor, got float32", e.getMessage());
        ArithmeticException a = assertThrows(ArithmeticException.class, () -> run("mean", Attrs.EMPTY, nd(I32, s(0))));
        assertEquals("mean: integer division by zero (nothing to average)", a.getMessage());
    }

    @Test
    void emptyReductionsGiveTheIdentity() {
        assertClose(f32(s(2), 0, 0), run("sum", attrs("axis", s(1)), f32(s(2, 0))), "sum");
        assertClose(f32(s(2), 1, 1), run("prod", attrs("axis", s(1)), f32(s(2, 0))), "prod");
        assertClose(f32(s(2), Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY), run("max", attrs("axis", s(1)), f32(s(2, 0))), "max");
    }
}
