package dev.relayfarm.kernel.compute;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.kernel.codegen.CCompiler;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Reductions and softmax through {@link OpComputes}, compiled and compared with the interpreter. */
class ReductionComputesTest {
    private static final OpKernelCases CASES = new OpKernelCases();

    private static String fn1(String shape, String dtype, String call) {
        return "fn (%x: Tensor[" + shape + ", " + dtype + "]) { " + call + " }";
    }

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found: native kernel tests skipped");
        for (String op : List.of("sum", "mean", "max", "min", "prod")) {
            for (String t : List.of("float32", "float64", "int32", "int8", "uint8", "int64")) {
                OpKernelCases.Gen g = op.equals("prod") ? (t.startsWith("float") ? OpKernelCases.uniform(0.5, 1.5) : OpKernelCases.ints(-2, 2)) : null;
                CASES.add(fn1("(4, 6, 5)", t, op + "(%x, axis=[1])"), g);
                CASES.add(fn1("(4, 6, 5)", t, op + "(%x, axis=[0, 2], keepdims=True)"), g);
                CASES.add(fn1("(4, 6, 5)", t, op + "(%x)"), g);
            }
            CASES.add(fn1("(4, 6, 5)", "float32", op + "(%x, axis=[1], exclude=True)"));
            CASES.add(fn1("(3, 33)", "float32", op + "(%x, axis=[-1], keepdims=True)"));
        }
        CASES.add(fn1("(4, 6, 5)", "bool", "sum(%x, axis=[1])"));
        for (String op : List.of("all", "any")) {
            CASES.add(fn1("(4, 6, 5)", "bool", op + "(%x, axis=[2])"));
            CASES.add(fn1("(4, 6, 5)", "bool", op + "(%x)"), OpKernelCases.ints(1, 1));
        }
        for (String op : List.of("argmax", "argmin")) {
            for (String t : List.of("float32", "int32", "int8")) {
                CASES.add(fn1("(4, 6, 5)", t, op + "(%x, axis=[1])"), OpKernelCases.ints(-3, 3));
                CASES.add(fn1("(4, 6, 5)", t, op + "(%x, axis=[1], select_last_index=True)"), OpKernelCases.ints(-3, 3));
                CASES.add(fn1("(4, 6, 5)", t, op + "(%x, axis=[0, 2], keepdims=True)"), OpKernelCases.ints(-3, 3));
                CASES.add(fn1("(4, 6, 5)", t, op + "(%x)"));
            }
        }
        for (String op : List.of("variance", "std")) {
            CASES.add("fn (%x: Tensor[(4, 6, 5), float32], %m: Tensor[(4, 1, 5), float32]) { " + op + "(%x, %m, axis=[1]) }");
            CASES.add("fn (%x: Tensor[(4, 6, 5), float32], %m: Tensor[(4, 1, 5), float32]) { " + op + "(%x, %m, axis=[1], keepdims=True, unbiased=True) }");
            CASES.add("fn (%x: Tensor[(4, 6, 5), float64], %m: Tensor[(1, 1, 1), float64]) { " + op + "(%x, %m) }");
        }
        CASES.add("fn (%x: Tensor[(4, 6, 5), int32], %m: Tensor[(4, 1, 5), int32]) { variance(%x, %m, axis=[1]) }");
        for (String op : List.of("nn.softmax", "nn.log_softmax")) {
            CASES.add(fn1("(4, 10)", "float32", op + "(%x)"));
            CASES.add(fn1("(2, 7, 5)", "float32", op + "(%x, axis=1)"));
            CASES.add(fn1("(2, 7, 5)", "float64", op + "(%x, axis=0)"));
        }
        CASES.build();
    }

    @AfterAll
    static void close() {
        CASES.close();
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        CASES.assertAllMatch(11);
        assertTrue(CASES.size() >= 130, "cases: " + CASES.size());
    }
}
