package dev.relayfarm.ir;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.Test;

class WellFormedTest {
    private static final TensorType T = TensorType.of(DType.FLOAT32, 2);

    @Test
    void sharedNodeHoldingAFunctionIsCheckedOnce() {
        // %0 = fn (%p) { exp(%p) }(%x) used twice: one function, its parameter bound once.
        Var x = Var.fresh("x", T);
        Var p = Var.fresh("p", T);
        Call shared = new Call(new Function(List.of(p), Call.op("exp", p)), List.of(x));
        IRModule m = IRModule.fromMain(new Function(List.of(x), Call.op("add", shared, shared)));
        assertEquals(List.of(), WellFormed.problems(m));
    }

    @Test
    void aBinderInTwoDistinctNodesIsStillBoundTwice() {
        Var x = Var.fresh("x", T);
        Var p = Var.fresh("p", T);
        Call a = new Call(new Function(List.of(p), Call.op("exp", p)), List.of(x));
        Call b = new Call(new Function(List.of(p), Call.op("log", p)), List.of(x));
        IRModule m = IRModule.fromMain(new Function(List.of(x), Call.op("add", a, b)));
        assertEquals(1, WellFormed.problems(m).size(), WellFormed.problems(m).toString());
        assertTrue(WellFormed.problems(m).getFirst().contains("bound twice"));
    }

    @Test
    void useOutsideScopeIsReportedAtEveryOccurrence() {
        Var x = Var.fresh("x", T);
        Var stray = Var.fresh("stray", T);
        IRModule m = IRModule.fromMain(new Function(List.of(x), Call.op("add", stray, Call.op("exp", stray))));
        assertEquals(2, WellFormed.problems(m).size(), WellFormed.problems(m).toString());
    }

    @Test
    void chainOfDiamondsIsLinear() {
        // 200 diamonds: walking shared nodes per path would take 2^200 steps.
        Var x = Var.fresh("x", T);
        Expr e = x;
        for (int i = 0; i < 200; i++) e = Call.op("add", Call.op("exp", e), Call.op("log", e));
        IRModule m = IRModule.fromMain(new Function(List.of(x), e));
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(10), () -> assertEquals(List.of(), WellFormed.problems(m)));
    }
}
