package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import org.junit.jupiter.api.Test;

class ToANormalFormTest {
    private static final String ANF = "to-a-normal-form";

    @Test
    void nestedCallsGetOneBindingEachInEvaluationOrder() {
        String before = """
                def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
                  add(exp(%x), negative(%y))
                }
                """;
        assertRewrites(ANF, before, """
                def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
                  let %a = exp(%x);
                  let %b = negative(%y);
                  let %c = add(%a, %b);
                  %c
                }
                """);
        assertSameResults(ANF, before);
    }

    @Test
    void sharedNodeIsBoundOnce() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  %0 = exp(%x);
                  (%0, add(%0, 1f))
                }
                """;
        assertRewrites(ANF, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %a = exp(%x);
                  let %b = add(%a, 1f);
                  let %t = (%a, %b);
                  %t
                }
                """);
        assertSameResults(ANF, before);
    }

    @Test
    void bindingsStayInTheBranchThatUsesThem() {
        String before = """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  if (%c) { add(exp(%x), 1f) } else { %x }
                }
                """;
        assertRewrites(ANF, before, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %i = if (%c) {
                    let %a = exp(%x);
                    let %b = add(%a, 1f);
                    %b
                  } else {
                    %x
                  };
                  %i
                }
                """);
        assertSameResults(ANF, before);
    }

    @Test
    void valueSharedByBothBranchesIsBoundBeforeTheIf() {
        String before = """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  %0 = exp(%x);
                  if (%c) { add(%0, 1f) } else { negative(%0) }
                }
                """;
        assertRewrites(ANF, before, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %a = exp(%x);
                  let %i = if (%c) {
                    let %b = add(%a, 1f);
                    %b
                  } else {
                    let %d = negative(%a);
                    %d
                  };
                  %i
                }
                """);
        assertSameResults(ANF, before);
    }

    @Test
    void functionBodiesAreTheirOwnScopeAndExistingLetsKeepTheirVariables() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %f = fn (%y: Tensor[(2), float32]) { exp(negative(%y)) };
                  add(%f(%x), %f(%x))
                }
                """;
        assertRewrites(ANF, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %f = fn (%y: Tensor[(2), float32]) {
                    let %a = negative(%y);
                    let %b = exp(%a);
                    %b
                  };
                  let %c = %f(%x);
                  let %d = %f(%x);
                  let %e = add(%c, %d);
                  %e
                }
                """);
        assertSameResults(ANF, before);
    }

    @Test
    void recursiveLocalFunctionAndMatchClauses() {
        String before = """
                type List[A] { Cons(A, List[A]), Nil }
                def @main(%x: Tensor[(2), float32]) {
                  let %len = fn (%l: List[Tensor[(2), float32]]) -> Tensor[(2), float32] {
                    match (%l) {
                      Cons(%h, %t) => add(%h, %len(%t)),
                      Nil => zeros_like(%x)
                    }
                  };
                  %len(Cons(%x, Cons(exp(%x), Nil)))
                }
                """;
        assertRewrites(ANF, before, """
                type List[A] { Cons(A, List[A]), Nil }
                def @main(%x: Tensor[(2), float32]) {
                  let %len = fn (%l: List[Tensor[(2), float32]]) -> Tensor[(2), float32] {
                    let %m = match (%l) {
                      Cons(%h, %t) => { let %r = %len(%t); let %s = add(%h, %r); %s },
                      Nil => { let %z = zeros_like(%x); %z }
                    };
                    %m
                  };
                  let %e = exp(%x);
                  let %l1 = Cons(%e, Nil);
                  let %l2 = Cons(%x, %l1);
                  let %n = %len(%l2);
                  %n
                }
                """);
        assertSameResults(ANF, before);
    }

    @Test
    void refEffectsKeepTheirOrder() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %r = ref(%x);
                  (ref_write(%r, exp(%x)), ref_read(%r))
                }
                """;
        assertRewrites(ANF, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %r = ref(%x);
                  let %e = exp(%x);
                  let %w = ref_write(%r, %e);
                  let %v = ref_read(%r);
                  let %t = (%w, %v);
                  %t
                }
                """);
        assertSameResults(ANF, before);
    }

    @Test
    void alreadyNormalOrAtomicProgramsAreLeftAlone() {
        assertUnchanged(ANF, """
                def @main(%x: Tensor[(2), float32]) {
                  let %a = exp(%x);
                  let %b = if (True) { let %c = add(%a, 1f); %c } else { %a };
                  %b
                }
                """);
        assertUnchanged(ANF, "def @main(%x: Tensor[(2), float32]) { %x }");
        assertUnchanged(ANF, "def @main(%x: Tensor[(2), float32]) { 1f }");
    }

    @Test
    void itsOwnOutputIsAFixedPoint() {
        IRModule once = PassAssert.run(ANF, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  %0 = exp(%x);
                  let %f = fn (%y: Tensor[(2), float32]) { add(%y, %0) };
                  if (%c) { %f(%0) } else { (%0, %x).1 }
                }
                """).module();
        PassResult twice = PassAssert.run(ANF, once);
        assertFalse(twice.changed());
    }

    @Test
    void hundredThousandChainsDoNotOverflow() {
        IRModule in = Chains.dataflow();
        IRModule out = Chains.run(new ToANormalForm(), in);
        Expr body = out.main().orElseThrow().body();
        int lets = 0;
        while (body instanceof Let l) {
            lets++;
            body = l.body();
        }
        assertEquals(Chains.N, lets);
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
        IRModule letChain = Chains.lets(0);
        assertSame(letChain, Chains.run(new ToANormalForm(), letChain));
    }
}
