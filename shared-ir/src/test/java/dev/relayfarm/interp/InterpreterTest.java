package dev.relayfarm.interp;

import static dev.relayfarm.interp.Ir.add;
import static dev.relayfarm.interp.Ir.call;
import static dev.relayfarm.interp.Ir.eq;
import static dev.relayfarm.interp.Ir.f32;
import static dev.relayfarm.interp.Ir.fn;
import static dev.relayfarm.interp.Ir.i32;
import static dev.relayfarm.interp.Ir.ifte;
import static dev.relayfarm.interp.Ir.less;
import static dev.relayfarm.interp.Ir.let;
import static dev.relayfarm.interp.Ir.mul;
import static dev.relayfarm.interp.Ir.op;
import static dev.relayfarm.interp.Ir.sub;
import static dev.relayfarm.interp.Ir.v;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.RefCreate;
import dev.relayfarm.ir.RefRead;
import dev.relayfarm.ir.RefWrite;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.Var;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Language semantics: the examples of the Relay documentation and one test per construct. */
class InterpreterTest {
    private final TestOps ops = new TestOps();

    private Value eval(Expr e) {
        return new Interpreter(IRModule.EMPTY, ops::resolve).evaluate(e);
    }

    private Value run(IRModule m, String global, NDArray... args) {
        return new Interpreter(m, ops::resolve).call(global, args);
    }

    private static double scalar(Value v) {
        NDArray a = v.asTensor();
        assertEquals(1, a.elementCount(), "expected a scalar, got " + a);
        return a.getDouble(0);
    }

    /** "Expressions in Relay", local variables: let %a = 1; let %b = 2 * %a; let %a = %a + %a; %a + %b. */
    @Test
    void shadowingExampleFromTheDocsIsFour() {
        Var a1 = v("a");
        Var b = v("b");
        Var a2 = v("a");
        Expr prog = let(a1, i32(1), let(b, mul(i32(2), a1), let(a2, add(a1, a1), add(a2, b))));
        assertEquals(4.0, scalar(eval(prog)));
    }

    /** "Expressions in Relay", calls: let %c = 1; let %f = fn(%x, %y) { %x + %y + %c }; %f(10, 11) = 22. */
    @Test
    void callExampleFromTheDocsIs22() {
        Var c = v("c");
        Var f = v("f");
        Var x = v("x");
        Var y = v("y");
        Expr prog = let(c, f32(1), let(f, fn(add(add(x, y), c), x, y), call(f, f32(10), f32(11))));
        assertEquals(22.0, scalar(eval(prog)));
    }

    /**
     * "Expressions in Relay", closures: %f captures %x = zeros at creation; calling it after an outer
     * %x = ones is bound still multiplies by zeros.
     */
    @Test
    void closureExampleFromTheDocsCapturesTheDefinitionTimeValue() {
        Var g = v("g");
        Var xInner = v("x");
        Var y = v("y");
        Var f = v("f");
        Var xOuter = v("x");
        Constant zeros = new Constant(NDArray.fromDoubles(DType.FLOAT32, new int[] {10, 10}, new double[100]));
        double[] onesData = new double[100];
        java.util.Arrays.fill(onesData, 1);
        Constant ones = new Constant(NDArray.fromDoubles(DType.FLOAT32, new int[] {10, 10}, onesData));
        Function gBody = fn(let(xInner, zeros, fn(mul(y, xInner), y)));
        Expr prog = let(g, gBody, let(f, call(g), let(xOuter, ones, call(f, xOuter))));
        NDArray result = eval(prog).asTensor();
        assertEquals(List.of(10, 10), java.util.Arrays.stream(result.shape()).boxed().toList());
        for (int i = 0; i < 100; i++) assertEquals(0.0, result.getDouble(i));
    }

    /**
     * "Expressions in Relay", functions: the recursive {@code %fact} bound by a let. The doc's version
     * works on (10, 10) tensors, whose {@code ==} is element-wise and so no bool scalar; this is the
     * same program on a scalar: let %fact = fn(%x) { if (%x == 0) { 1 } else { %x * %fact(%x - 1) } }; %fact(10).
     */
    @Test
    void recursiveLetFactorial() {
        Var fact = v("fact");
        Var x = v("x");
        Expr body = ifte(eq(x, f32(0)), f32(1), mul(x, call(fact, sub(x, f32(1)))));
        Expr prog = let(fact, fn(body, x), call(fact, f32(10)));
        assertEquals(3628800.0, scalar(eval(prog)));
    }

    @Test
    void globalFunctionsRecurseAndCallEachOtherMutually() {
        // @is_even(n) = if n == 0 then true else @is_odd(n - 1); @is_odd(n) = if n == 0 then false else @is_even(n - 1)
        Var n1 = v("n");
        Var n2 = v("n");
        GlobalVar even = new GlobalVar("is_even");
        GlobalVar odd = new GlobalVar("is_odd");
        IRModule m = IRModule.EMPTY
                .withFunction(even, fn(ifte(eq(n1, i32(0)), new Constant(NDArray.scalar(true)), call(odd, sub(n1, i32(1)))), n1))
                .withFunction(odd, fn(ifte(eq(n2, i32(0)), new Constant(NDArray.scalar(false)), call(even, sub(n2, i32(1)))), n2));
        assertTrue(run(m, "is_even", NDArray.scalar(10)).asTensor().getBoolean(0));
        assertTrue(!run(m, "is_even", NDArray.scalar(7)).asTensor().getBoolean(0));
        assertTrue(run(m, "is_odd", NDArray.scalar(7)).asTensor().getBoolean(0));
    }

    @Test
    void ackermannOnIntegers() {
        // @ack(m, n) = if m == 0 then n + 1 else if n == 0 then @ack(m - 1, 1) else @ack(m - 1, @ack(m, n - 1))
        Var m = v("m");
        Var n = v("n");
        GlobalVar ack = new GlobalVar("ack");
        Expr body = ifte(eq(m, i32(0)), add(n, i32(1)),
                ifte(eq(n, i32(0)), call(ack, sub(m, i32(1)), i32(1)),
                        call(ack, sub(m, i32(1)), call(ack, m, sub(n, i32(1))))));
        IRModule mod = IRModule.EMPTY.withFunction(ack, fn(body, m, n));
        assertEquals(9.0, scalar(run(mod, "ack", NDArray.scalar(2), NDArray.scalar(3))));
        assertEquals(61.0, scalar(run(mod, "ack", NDArray.scalar(3), NDArray.scalar(3))));
    }

    @Test
    void ifElseChainClassifiesTheSign() {
        Var x = v("x");
        Expr body = ifte(less(x, i32(0)), i32(-1), ifte(eq(x, i32(0)), i32(0), i32(1)));
        IRModule m = IRModule.fromMain(fn(body, x));
        assertEquals(-1.0, scalar(run(m, "main", NDArray.scalar(-5))));
        assertEquals(0.0, scalar(run(m, "main", NDArray.scalar(0))));
        assertEquals(1.0, scalar(run(m, "main", NDArray.scalar(3))));
    }

    @Test
    void tuplesAndProjections() {
        Expr inner = new Tuple(List.of(i32(1), i32(2)));
        Expr outer = new Tuple(List.of(inner, i32(3)));
        assertEquals(2.0, scalar(eval(new TupleGetItem(new TupleGetItem(outer, 0), 1))));
        assertEquals(3.0, scalar(eval(new TupleGetItem(outer, 1))));
        Value unit = eval(new Tuple(List.of()));
        assertSame(Value.UNIT, unit);
        TupleValue t = assertInstanceOf(TupleValue.class, eval(outer));
        assertEquals(2, t.fields().size());
        assertInstanceOf(TupleValue.class, t.get(0));
    }

    @Test
    void refCounterCountsThreeIncrements() {
        // let %r = ref(0); let %inc = fn() { ref_write(%r, ref_read(%r) + 1) }; %inc(); %inc(); %inc(); ref_read(%r)
        Var r = v("r");
        Var inc = v("inc");
        Expr incBody = new RefWrite(r, add(new RefRead(r), i32(1)));
        Expr prog = let(r, new RefCreate(i32(0)), let(inc, fn(incBody),
                let(v("_"), call(inc), let(v("_"), call(inc), let(v("_"), call(inc), new RefRead(r))))));
        assertEquals(3.0, scalar(eval(prog)));
        assertSame(Value.UNIT, eval(let(r, new RefCreate(i32(0)), new RefWrite(r, i32(5)))));
        assertInstanceOf(RefValue.class, eval(new RefCreate(i32(0))));
    }

    @Test
    void closuresAreFirstClassAndCurried() {
        // let %adder = fn(%a) { fn(%b) { %a + %b } }; let %add5 = %adder(5); (%add5(1), %add5(10))
        Var adder = v("adder");
        Var a = v("a");
        Var b = v("b");
        Var add5 = v("add5");
        Expr prog = let(adder, fn(fn(add(a, b), b), a), let(add5, call(adder, i32(5)),
                new Tuple(List.of(call(add5, i32(1)), call(add5, i32(10))))));
        TupleValue t = (TupleValue) eval(prog);
        assertEquals(6.0, scalar(t.get(0)));
        assertEquals(15.0, scalar(t.get(1)));
    }

    @Test
    void immediatelyAppliedFunctionAndApplyFromJava() {
        Var x = v("x");
        assertEquals(14.0, scalar(eval(call(fn(mul(x, i32(2)), x), i32(7)))));
        Interpreter interp = new Interpreter(IRModule.EMPTY, ops::resolve);
        Value closure = interp.evaluate(fn(add(x, x), x));
        assertInstanceOf(ClosureValue.class, closure);
        assertEquals(8.0, scalar(interp.apply(closure, List.of(Value.tensor(NDArray.scalar(4))))));
    }

    @Test
    void globalsAndOperatorsAreFirstClassValues() {
        // def @twice(%f, %x) { %f(%f(%x)) }; def @inc(%y) { %y + 1 }; @twice(@inc, 5) and @twice(add-curried...) via op value
        Var f = v("f");
        Var x = v("x");
        Var y = v("y");
        IRModule m = IRModule.EMPTY
                .withFunction("twice", fn(call(f, call(f, x)), f, x))
                .withFunction("inc", fn(add(y, i32(1)), y))
                .withFunction("main", fn(call(new GlobalVar("twice"), new GlobalVar("inc"), i32(5))));
        assertEquals(7.0, scalar(run(m, "main")));
        Var g = v("g");
        Expr opAsValue = let(g, dev.relayfarm.ir.Op.get("multiply"), call(g, i32(6), i32(7)));
        assertEquals(42.0, scalar(eval(opAsValue)));
    }

    @Test
    void operatorWithTwoResultsGivesATupleAndTupleArgumentsAreFlattened() {
        Value pair = eval(op("test.split2", i32(4)));
        TupleValue t = assertInstanceOf(TupleValue.class, pair);
        assertEquals(2, t.fields().size());
        // test.sum_all receives the tuple ((1, 2), 3) flattened to three arrays.
        Expr nested = new Tuple(List.of(new Tuple(List.of(i32(1), i32(2))), i32(3)));
        assertEquals(6.0, scalar(eval(op("test.sum_all", nested))));
        // A one-field tuple result is recognised through the operator's type relation.
        TupleValue one = assertInstanceOf(TupleValue.class, eval(op("test.one_tuple", i32(4))));
        assertEquals(1, one.fields().size());
        assertEquals(4.0, scalar(eval(new TupleGetItem(op("test.split2", i32(4)), 1))));
    }

    @Test
    void sharedSubexpressionRunsOncePerActivation() {
        // %s = counted(x) used twice in one body: one kernel call per evaluation of the body.
        Var x = v("x");
        Expr shared = op("test.counted", x);
        Function body = fn(add(shared, shared), x);
        IRModule m = IRModule.fromMain(body);
        Interpreter interp = new Interpreter(m, ops::resolve);
        assertEquals(6.0, scalar(interp.call("main", NDArray.scalar(3))));
        assertEquals(1, ops.counted.get());
        assertEquals(8.0, scalar(interp.call("main", NDArray.scalar(4))));
        assertEquals(2, ops.counted.get(), "a new activation recomputes the shared node");

        // Inside a recursive function, each activation has its own memo: 4 activations, 4 kernel calls.
        ops.counted.set(0);
        Var n = v("n");
        GlobalVar down = new GlobalVar("down");
        Expr c = op("test.counted", n);
        Expr rec = ifte(eq(c, i32(0)), c, add(c, call(down, sub(c, i32(1)))));
        IRModule m2 = IRModule.EMPTY.withFunction(down, fn(rec, n));
        assertEquals(6.0, scalar(new Interpreter(m2, ops::resolve).call("down", NDArray.scalar(3))));
        assertEquals(4, ops.counted.get());
    }

    @Test
    void unsharedSubexpressionsAreNotMemoizedAcrossBranches() {
        // Two distinct (unshared) nodes with the same shape run twice.
        Var x = v("x");
        Expr prog = call(fn(add(op("test.counted", x), op("test.counted", x)), x), i32(2));
        assertEquals(4.0, scalar(eval(prog)));
        assertEquals(2, ops.counted.get());
    }

    @Test
    void staticEvalAndRunWithoutInjectedOperators() {
        Var x = v("x");
        assertEquals(3.0, scalar(Interpreter.eval(new TupleGetItem(new Tuple(List.of(i32(1), i32(3))), 1))));
        IRModule m = IRModule.fromMain(fn(new Tuple(List.of(x, x)), x));
        TupleValue t = (TupleValue) Interpreter.runMain(m, NDArray.scalar(2.5f));
        assertEquals(2.5, scalar(t.get(1)));
    }
}
