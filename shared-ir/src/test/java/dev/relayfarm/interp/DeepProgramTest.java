package dev.relayfarm.interp;

import static dev.relayfarm.interp.Ir.add;
import static dev.relayfarm.interp.Ir.call;
import static dev.relayfarm.interp.Ir.eq;
import static dev.relayfarm.interp.Ir.fn;
import static dev.relayfarm.interp.Ir.i32;
import static dev.relayfarm.interp.Ir.ifte;
import static dev.relayfarm.interp.Ir.sub;
import static dev.relayfarm.interp.Ir.v;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Var;
import org.junit.jupiter.api.Test;

/**
 * Programs far deeper than the Java stack could follow with one frame per node (surefire runs
 * without a raised -Xss): the interpreter's continuation stack lives on the heap.
 */
class DeepProgramTest {
    private final TestOps ops = new TestOps();

    /** let %x1 = %x0 + 1; let %x2 = %x1 + 1; ... %xN, starting from %x0 = the parameter. */
    static IRModule letChain(int n) {
        Var x0 = v("x0");
        Var[] xs = new Var[n + 1];
        xs[0] = x0;
        for (int i = 1; i <= n; i++) xs[i] = v("x" + i);
        Expr body = xs[n];
        for (int i = n; i >= 1; i--) body = new Let(xs[i], add(xs[i - 1], i32(1)), body);
        return IRModule.fromMain(fn(body, x0));
    }

    /** add(add(add(%x, 1), 1), 1) ... n deep, as one nested dataflow expression. */
    static IRModule dataflowChain(int n) {
        Var x = v("x");
        Expr e = x;
        for (int i = 0; i < n; i++) e = add(e, i32(1));
        return IRModule.fromMain(fn(e, x));
    }

    @Test
    void letChainOf100kBindings() {
        Value r = new Interpreter(letChain(100_000), ops::resolve).call("main", NDArray.scalar(5));
        assertEquals(100_005, r.asTensor().getLong(0));
    }

    @Test
    void dataflowChainOf100kNestedCalls() {
        Value r = new Interpreter(dataflowChain(100_000), ops::resolve).call("main", NDArray.scalar(1));
        assertEquals(100_001, r.asTensor().getLong(0));
    }

    @Test
    void nonTailRecursionTenThousandDeep() {
        // def @sum_to(%n) { if (%n == 0) { 0 } else { %n + @sum_to(%n - 1) } }
        Var n = v("n");
        GlobalVar sumTo = new GlobalVar("sum_to");
        IRModule m = IRModule.EMPTY.withFunction(sumTo, fn(ifte(eq(n, i32(0)), i32(0), add(n, call(sumTo, sub(n, i32(1))))), n));
        assertEquals(50_005_000, new Interpreter(m, ops::resolve).call("sum_to", NDArray.scalar(10_000)).asTensor().getLong(0));
    }

    @Test
    void natOfTenThousandBuiltAndCountedRecursively() {
        IRModule m = AdtInterpreterTest.natModule();
        Interpreter in = new Interpreter(m, ops::resolve);
        Value nat = in.call("of_int", NDArray.scalar(10_000));
        assertEquals(10_000, in.call("to_int", java.util.List.of(nat)).asTensor().getLong(0));
    }

    @Test
    void tailRecursionFiftyThousandDeepRunsWithoutGrowingTheStack() {
        // def @count(%n, %acc) { if (%n == 0) { %acc } else { @count(%n - 1, %acc + 1) } }
        Var n = v("n");
        Var acc = v("acc");
        GlobalVar count = new GlobalVar("count");
        IRModule m = IRModule.EMPTY.withFunction(count,
                fn(ifte(eq(n, i32(0)), acc, call(count, sub(n, i32(1)), add(acc, i32(1)))), n, acc));
        Value r = new Interpreter(m, ops::resolve).call("count", NDArray.scalar(50_000), NDArray.scalar(0));
        assertEquals(50_000, r.asTensor().getLong(0));
    }
}
