package dev.relayfarm.interp;

import static dev.relayfarm.interp.Ir.add;
import static dev.relayfarm.interp.Ir.fn;
import static dev.relayfarm.interp.Ir.i32;
import static dev.relayfarm.interp.Ir.v;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.If;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.Span;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.TupleGetItem;
import dev.relayfarm.ir.Var;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Run-time errors name the problem and the span of the failing expression. */
class InterpreterErrorTest {
    private static final Span AT = new Span("prog.relay", 4, 7);
    private final TestOps ops = new TestOps();

    private InterpreterException fails(Expr e) {
        return assertThrows(InterpreterException.class, () -> new Interpreter(IRModule.EMPTY, ops::resolve).evaluate(e));
    }

    private static Call callAt(Expr callee, Expr... args) {
        return new Call(callee, List.of(args), Attrs.EMPTY, List.of(), AT);
    }

    @Test
    void wrongArgumentCountOfAClosure() {
        Var x = v("x");
        Var f = v("f");
        InterpreterException e = fails(Ir.let(f, fn(x, x), callAt(f, i32(1), i32(2))));
        assertEquals("prog.relay:4:7: the closure takes 1 arguments [%x], got 2", e.getMessage());
        assertEquals(AT, e.span());
    }

    @Test
    void wrongArgumentCountOfAGlobal() {
        Var x = v("x");
        IRModule m = IRModule.EMPTY.withFunction("id", fn(x, x))
                .withFunction("main", fn(callAt(new dev.relayfarm.ir.GlobalVar("id"))));
        InterpreterException e = assertThrows(InterpreterException.class, () -> new Interpreter(m, ops::resolve).call("main"));
        assertEquals("prog.relay:4:7: @id takes 1 arguments [%x], got 0", e.getMessage());
    }

    @Test
    void callingATensor() {
        Var x = v("x");
        InterpreterException e = fails(Ir.let(x, i32(3), callAt(x, i32(1))));
        assertEquals("prog.relay:4:7: cannot call a non-function value: int32", e.getMessage());
    }

    @Test
    void kernelFailureIsWrappedWithOperatorNameInputsAndSpan() {
        InterpreterException e = fails(callAt(Op.get("test.fail"), i32(3)));
        assertEquals("prog.relay:4:7: operator test.fail failed on inputs [int32]: input must be positive", e.getMessage());
        assertTrue(e.getCause() instanceof IllegalArgumentException);
    }

    @Test
    void unknownOperatorAndBadAttributes() {
        InterpreterException unknown = fails(callAt(Op.get("no.such_op"), i32(3)));
        assertEquals("prog.relay:4:7: operator no.such_op: unknown operator 'no.such_op'", unknown.getMessage());
        Call withAttr = new Call(Op.get("add"), List.of(i32(1), i32(2)), Attrs.of("axis", AttrValue.of(1)), List.of(), AT);
        InterpreterException attrs = fails(withAttr);
        assertEquals("prog.relay:4:7: operator add: bad attributes: add: unknown attribute 'axis'", attrs.getMessage());
        InterpreterException arity = fails(callAt(Op.get("add"), i32(3)));
        assertEquals("prog.relay:4:7: operator add takes 2 arguments, got 1", arity.getMessage());
    }

    @Test
    void ifConditionMustBeABoolScalar() {
        InterpreterException e = fails(new If(i32(1), i32(2), i32(3), AT));
        assertEquals("prog.relay:4:7: if condition must be a bool scalar, got int32", e.getMessage());
    }

    @Test
    void projectionOfANonTupleAndOutOfRange() {
        assertEquals("prog.relay:4:7: projection .0 of a non-tuple value int32",
                fails(new TupleGetItem(i32(1), 0, AT)).getMessage());
        Expr pair = new dev.relayfarm.ir.Tuple(List.of(i32(1), i32(2)));
        assertEquals("prog.relay:4:7: projection .2 out of range for a tuple of 2 fields",
                fails(new TupleGetItem(pair, 2, AT)).getMessage());
    }

    @Test
    void unboundVariable() {
        Var ghost = Var.fresh("ghost", null, AT);
        assertEquals("prog.relay:4:7: unbound variable %ghost", fails(add(ghost, i32(1))).getMessage());
    }

    @Test
    void refOperationsOnNonReferences() {
        assertEquals("prog.relay:4:7: ref_read of a non-reference value int32",
                fails(new dev.relayfarm.ir.RefRead(i32(1), AT)).getMessage());
    }

    @Test
    void mainParametersAreCheckedAgainstTheirAnnotations() {
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 1, 3), new Span("m.relay", 1, 10));
        IRModule m = IRModule.fromMain(fn(x, x));
        Interpreter in = new Interpreter(m, ops::resolve);
        NDArray wrongShape = NDArray.zeros(DType.FLOAT32, 2, 3);
        InterpreterException e = assertThrows(InterpreterException.class, () -> in.call("main", wrongShape));
        assertEquals("m.relay:1:10: @main parameter %x expects Tensor[(1, 3), float32], got Tensor[(2, 3), float32]", e.getMessage());
        InterpreterException dtype = assertThrows(InterpreterException.class, () -> in.call("main", NDArray.zeros(DType.INT32, 1, 3)));
        assertEquals("m.relay:1:10: @main parameter %x expects Tensor[(1, 3), float32], got Tensor[(1, 3), int32]", dtype.getMessage());
        InterpreterException count = assertThrows(InterpreterException.class, () -> in.call("main"));
        assertEquals("@main takes 1 arguments (%x: Tensor[(1, 3), float32]), got 0", count.getMessage());
        assertEquals(3, in.call("main", NDArray.zeros(DType.FLOAT32, 1, 3)).asTensor().elementCount());
        InterpreterException missing = assertThrows(InterpreterException.class, () -> in.call("nope"));
        assertTrue(missing.getMessage().startsWith("no global function @nope in the module"), missing.getMessage());
    }

    @Test
    void symbolicAndAnyDimensionsAcceptConsistentSizes() {
        // def @main(%a: Tensor[(n, 2), float32], %b: Tensor[(n, ?), float32])
        Var a = Var.fresh("a", new TensorType(List.of(Dim.sym("n"), Dim.of(2)), DType.FLOAT32));
        Var b = Var.fresh("b", new TensorType(List.of(Dim.sym("n"), Dim.ANY), DType.FLOAT32));
        IRModule m = IRModule.fromMain(fn(a, a, b));
        Interpreter in = new Interpreter(m, ops::resolve);
        in.call("main", NDArray.zeros(DType.FLOAT32, 4, 2), NDArray.zeros(DType.FLOAT32, 4, 9));
        InterpreterException e = assertThrows(InterpreterException.class,
                () -> in.call("main", NDArray.zeros(DType.FLOAT32, 4, 2), NDArray.zeros(DType.FLOAT32, 5, 9)));
        assertEquals("@main parameter %b expects Tensor[(n, ?), float32], got Tensor[(5, 9), float32]", e.getMessage());
    }
}
