package dev.relayfarm.kernel.compute;

import static dev.relayfarm.kernel.compute.OpKernelCases.ints;
import static dev.relayfarm.kernel.compute.OpKernelCases.nonzero;
import static dev.relayfarm.kernel.compute.OpKernelCases.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Element-wise and broadcast operators through {@link OpComputes}, compiled and compared with the interpreter. */
class ElementwiseComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();

    private static String fn1(String op, String dtype, String shape, String attrs) {
        return "fn (%x: Tensor[" + shape + ", " + dtype + "]) { " + op + "(%x" + (attrs.isEmpty() ? "" : ", " + attrs) + ") }";
    }

    private static String fn2(String op, String dtype, String shapeA, String shapeB) {
        return "fn (%a: Tensor[" + shapeA + ", " + dtype + "], %b: Tensor[" + shapeB + ", " + dtype + "]) { " + op + "(%a, %b) }";
    }

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        List<String> all = List.of("float32", "float64", "int32", "int8", "uint8", "int64", "uint32", "bool");
        List<String> numeric = List.of("float32", "float64", "int32", "int8", "uint8", "int64", "uint32");
        for (String op : List.of("add", "subtract", "multiply", "maximum", "minimum", "logical_and", "logical_or", "logical_xor",
                "equal", "not_equal", "less", "less_equal", "greater", "greater_equal")) {
            for (String t : all) CASES.add(fn2(op, t, "(4, 1, 5)", "(3, 5)"));
        }
        CASES.add(fn2("add", "float32", "(2, 3, 70)", "(2, 3, 70)"));
        CASES.add(fn2("multiply", "float32", "()", "(6, 7)"));
        CASES.add(fn2("add", "float32", "()", "()"));
        for (String op : List.of("divide", "trunc_divide", "floor_divide", "floor_mod", "mod", "trunc_mod")) {
            for (String t : numeric) CASES.add(fn2(op, t, "(4, 1, 5)", "(3, 5)"), null, t.startsWith("float") ? nonzero(uniform(-3, 3)) : nonzero(t.startsWith("u") ? ints(1, 9) : ints(-9, 9)));
        }
        for (String t : List.of("float32", "float64")) CASES.add(fn2("power", t, "(3, 4)", "(4)"), uniform(0.1, 3), uniform(-2, 2));
        for (String t : List.of("int32", "int64", "int8", "uint8")) CASES.add(fn2("power", t, "(3, 4)", "(4)"), ints(t.startsWith("u") ? 0 : -3, 3), ints(0, 4));
        CASES.add(fn2("power", "int32", "(3, 4)", "(4)"), ints(-3, 3), ints(-3, 4));
        for (String op : List.of("bitwise_and", "bitwise_or", "bitwise_xor")) {
            for (String t : List.of("int32", "int8", "uint8", "int64", "bool")) CASES.add(fn2(op, t, "(4, 1, 5)", "(3, 5)"), ints(-100, 100), ints(-100, 100));
        }
        for (String op : List.of("left_shift", "right_shift")) {
            for (String t : List.of("int32", "int8", "uint8", "int64", "uint32")) {
                CASES.add(fn2(op, t, "(4, 5)", "(5)"), t.startsWith("u") ? ints(0, 100) : ints(-100, 100), ints(0, 6));
            }
        }
        for (String op : List.of("negative", "abs", "sign", "floor", "ceil", "round", "trunc", "logical_not")) {
            for (String t : all) CASES.add(fn1(op, t, "(3, 70)", ""), t.startsWith("float") ? uniform(-3, 3) : null);
        }
        for (String t : List.of("int32", "int8", "uint8", "int64")) CASES.add(fn1("bitwise_not", t, "(5, 7)", ""));
        for (String op : List.of("exp", "log", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "erf", "tanh", "sinh", "cosh", "sin", "cos", "tan",
                "asin", "acos", "atan", "asinh", "acosh", "atanh")) {
            OpKernelCases.Gen g = switch (op) {
                case "log", "log2", "log10", "sqrt", "rsqrt" -> uniform(0.05, 5);
                case "acosh" -> uniform(1.01, 5);
                case "asin", "acos", "atanh" -> uniform(-0.95, 0.95);
                default -> uniform(-2, 2);
            };
            for (String t : List.of("float32", "float64")) CASES.add(fn1(op, t, "(3, 70)", ""), g);
        }
        OpKernelCases.Gen special = (rnd, t, shape) -> {
            var a = uniform(-2, 2).make(rnd, t, shape);
            double[] s = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0.0, -0.0};
            for (int i = 0; i < s.length; i++) a.setDouble(i * 3, s[i]);
            return a;
        };
        for (String op : List.of("isnan", "isinf", "isfinite")) {
            for (String t : List.of("float32", "float64")) CASES.add(fn1(op, t, "(4, 9)", ""), special);
            CASES.add(fn1(op, "int32", "(4, 9)", ""));
        }
        for (String t : numeric) CASES.add(fn1("clip", t, "(5, 13)", "a_min=-3.5f, a_max=6.25f"), t.startsWith("float") ? uniform(-8, 8) : null);
        CASES.add(fn1("clip", "uint8", "(5, 13)", "a_min=-3f, a_max=1000f"), ints(0, 255));
        CASES.add(fn1("clip", "int8", "(5, 13)", "a_min=-1000f, a_max=10f"), ints(-128, 127));
        CASES.add(fn1("clip", "float32", "(5, 13)", "a_min=0.1f, a_max=0.3f"), uniform(0, 0.5));
        for (String from : all) {
            for (String to : all) {
                if (from.equals(to)) continue;
                // float -> unsigned/narrow is undefined in C outside the target's range: stay inside it
                OpKernelCases.Gen g = from.startsWith("float") ? (to.startsWith("u") || to.equals("bool") ? uniform(0, 120) : uniform(-120, 120)) : null;
                CASES.add(fn1("cast", from, "(3, 11)", "dtype=\"" + to + "\""), g);
            }
        }
        for (String t : List.of("float32", "int32", "int8", "bool", "float64")) {
            CASES.add("fn (%c: Tensor[(4, 1), bool], %x: Tensor[(4, 6), " + t + "], %y: Tensor[(6), " + t + "]) { where(%c, %x, %y) }");
        }
        CASES.add("fn (%c: Tensor[(4, 6), float32], %x: Tensor[(1, 6), int32], %y: Tensor[(4, 1), int32]) { where(%c, %x, %y) }", ints(-1, 1));
        for (String t : List.of("float32", "float64", "int32", "int8")) {
            CASES.add(fn1("nn.relu", t, "(3, 70)", ""));
            CASES.add(fn1("nn.leaky_relu", t, "(3, 70)", "alpha=0.3f"));
            CASES.add("fn (%x: Tensor[(2, 3, 4, 5), " + t + "], %w: Tensor[(3), " + t + "]) { nn.prelu(%x, %w) }");
            CASES.add("fn (%x: Tensor[(2, 3, 4, 5), " + t + "], %w: Tensor[(5), " + t + "]) { nn.prelu(%x, %w, axis=-1) }");
            CASES.add("fn (%x: Tensor[(2, 16, 5, 7), " + t + "], %b: Tensor[(16), " + t + "]) { nn.bias_add(%x, %b) }");
        }
        CASES.add("fn (%x: Tensor[(2, 6, 5), float32], %b: Tensor[(5), float32]) { nn.bias_add(%x, %b, axis=-1) }");
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(42);
        assertTrue(CASES.size() >= 390, "cases: " + CASES.size());
    }

    @Test
    void unsupportedIsAnErrorNamingTheOperator() {
        DType vector = DType.parse("float32x4");
        Tensor h = Te.placeholder("h", List.of(4), vector);
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> OpComputes.compute("exp", List.of(h), Attrs.EMPTY, TensorType.of(vector, 4)));
        assertEquals("exp: dtype float32x4 is not supported by the C kernels (scalar float16/bfloat16/float32/float64, integers and bool are)", e.getMessage());
        Tensor i = Te.placeholder("i", List.of(4), DType.INT32);
        e = assertThrows(UnsupportedOperationException.class, () -> OpComputes.compute("exp", List.of(i), Attrs.EMPTY, TensorType.of(DType.INT32, 4)));
        assertEquals("exp: expects a floating-point tensor, got int32", e.getMessage());
        e = assertThrows(UnsupportedOperationException.class, () -> OpComputes.compute("no.such.op", List.of(i), Attrs.EMPTY, TensorType.of(DType.INT32, 4)));
        assertEquals("no.such.op: unknown operator", e.getMessage());
        assertTrue(OpComputes.supports("add"));
        assertEquals(dev.relayfarm.ops.OpPattern.BROADCAST, OpComputes.pattern("add"));
    }
}
