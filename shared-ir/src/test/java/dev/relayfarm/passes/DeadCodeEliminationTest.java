package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import org.junit.jupiter.api.Test;

class DeadCodeEliminationTest {
    private static final String DCE = "dead-code-elimination";

    @Test
    void unusedPureBindingsGoEffectsStay() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %a = exp(%x);
                  let %b = ref(%x);
                  let %c = ref_write(%b, %x);
                  let %d = add(%x, 1f);
                  %d
                }
                """;
        assertRewrites(DCE, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %b = ref(%x);
                  let %c = ref_write(%b, %x);
                  let %d = add(%x, 1f);
                  %d
                }
                """);
        assertSameResults(DCE, before);
    }

    @Test
    void chainsOfDeadBindingsGoInOneRun() {
        assertRewrites(DCE, """
                def @main(%x: Tensor[(2), float32]) {
                  let %a = exp(%x);
                  let %b = negative(%a);
                  let %c = (%a, %b);
                  %x
                }
                """, "def @main(%x: Tensor[(2), float32]) { %x }");
    }

    @Test
    void unusedRecursiveFunctionGoesItsSelfReferenceDoesNotCount() {
        assertRewrites(DCE, """
                def @main(%x: Tensor[(2), float32]) {
                  let %f = fn (%n: int32) -> int32 { if (less(%n, 1)) { 0 } else { %f(subtract(%n, 1)) } };
                  %x
                }
                """, "def @main(%x: Tensor[(2), float32]) { %x }");
    }

    @Test
    void callsOfUnknownOrImpureFunctionsStayPureOnesGo() {
        String before = """
                def @bump(%r: ref(Tensor[(2), float32])) { ref_write(%r, exp(ref_read(%r))) }
                def @pure(%y: Tensor[(2), float32]) { negative(%y) }
                def @main(%x: Tensor[(2), float32], %g: fn (Tensor[(2), float32]) -> Tensor[(2), float32]) {
                  let %r = ref(%x);
                  let %u1 = @bump(%r);
                  let %u2 = @pure(%x);
                  let %u3 = %g(%x);
                  let %h = fn (%z: Tensor[(2), float32]) { add(%z, %z) };
                  let %u4 = %h(%x);
                  ref_read(%r)
                }
                """;
        assertRewrites(DCE, before, """
                def @bump(%r: ref(Tensor[(2), float32])) { ref_write(%r, exp(ref_read(%r))) }
                def @pure(%y: Tensor[(2), float32]) { negative(%y) }
                def @main(%x: Tensor[(2), float32], %g: fn (Tensor[(2), float32]) -> Tensor[(2), float32]) {
                  let %r = ref(%x);
                  let %u1 = @bump(%r);
                  let %u3 = %g(%x);
                  ref_read(%r)
                }
                """);
    }

    @Test
    void deadBindingsInsideBranchesAndFunctionsToo() {
        String before = """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %f = fn (%y: Tensor[(2), float32]) { let %dead = exp(%y); negative(%y) };
                  if (%c) { let %z = sum(%x); %f(%x) } else { %x }
                }
                """;
        assertRewrites(DCE, before, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %f = fn (%y: Tensor[(2), float32]) { negative(%y) };
                  if (%c) { %f(%x) } else { %x }
                }
                """);
        assertSameResults(DCE, before);
    }

    @Test
    void nothingDeadIsNoChange() {
        assertUnchanged(DCE, """
                def @main(%x: Tensor[(2), float32]) {
                  let %a = exp(%x);
                  let %r = ref(%a);
                  let %w = ref_write(%r, %x);
                  add(%a, ref_read(%r))
                }
                """);
    }

    private static IRModule withInlineOnce(String text) {
        IRModule in = TypeInference.infer(RelayParser.parseModule(text)).module();
        return new Sequential("t", List.of(new DeadCodeElimination(new DeadCodeElimination.Options(true))))
                .run(in, new PassContext(PassOptions.level(3).withValidate(true))).module();
    }

    private static void assertModule(String expected, IRModule actual) {
        IRModule want = TypeInference.infer(RelayParser.parseModule(expected)).module();
        assertTrue(StructuralEquality.equal(actual, want), () -> dev.relayfarm.text.RelayPrinter.print(actual));
    }

    @Test
    void inlineOnceSubstitutesSingleUsesOfPureValues() {
        String before = """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %a = exp(%x);
                  let %b = negative(%x);
                  let %r = ref(%x);
                  let %v = ref_read(%r);
                  let %f = fn (%y: Tensor[(2), float32]) { add(%y, %b) };
                  let %s = sum(%x);
                  let %k = fn (%n: int32) -> int32 { if (less(%n, 1)) { 0 } else { %k(subtract(%n, 1)) } };
                  (if (%c) { add(%a, %v) } else { %x }, %f(%x), %s, %s, %k(2))
                }
                """;
        // %a moves into the branch, %f to its call; %b stays (its use is inside a function),
        // %v stays (an effect), %s stays (two uses), %k stays (recursive).
        IRModule out = withInlineOnce(before);
        assertModule("""
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %b = negative(%x);
                  let %r = ref(%x);
                  let %v = ref_read(%r);
                  let %s = sum(%x);
                  let %k = fn (%n: int32) -> int32 { if (less(%n, 1)) { 0 } else { %k(subtract(%n, 1)) } };
                  (if (%c) { add(exp(%x), %v) } else { %x }, (fn (%y: Tensor[(2), float32]) { add(%y, %b) })(%x), %s, %s, %k(2))
                }
                """, out);
        IRModule in = TypeInference.infer(RelayParser.parseModule(before)).module();
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
    }

    @Test
    void hundredThousandLetChainWithEveryThirdBindingDead() {
        IRModule in = Chains.lets(3);
        IRModule out = Chains.run(new DeadCodeElimination(), in);
        Expr body = out.main().orElseThrow().body();
        int lets = 0;
        while (body instanceof Let l) {
            lets++;
            body = l.body();
        }
        assertEquals(Chains.N - (Chains.N + 2) / 3, lets);
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
        IRModule inlined = Chains.run(new DeadCodeElimination(new DeadCodeElimination.Options(true)), Chains.lets(0));
        assertFalse(inlined.main().orElseThrow().body() instanceof Let);
    }
}
