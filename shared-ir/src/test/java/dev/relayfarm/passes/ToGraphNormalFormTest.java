package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import org.junit.jupiter.api.Test;

class ToGraphNormalFormTest {
    private static final String GNF = "to-graph-normal-form";

    @Test
    void pureBindingsBecomeSharedDataflow() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %a = exp(%x);
                  let %b = add(%a, %a);
                  %b
                }
                """;
        IRModule out = assertRewrites(GNF, before, """
                def @main(%x: Tensor[(2), float32]) {
                  %0 = exp(%x);
                  add(%0, %0)
                }
                """);
        // One exp node with two uses, not two copies.
        Call add = (Call) out.main().orElseThrow().body();
        assertSame(add.args().get(0), add.args().get(1));
        assertSameResults(GNF, before);
    }

    @Test
    void undoesANormalForm() {
        String graph = """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  %0 = exp(%x);
                  if (%c) { add(%0, 1f) } else { negative(%0) }
                }
                """;
        IRModule anf = PassAssert.run("to-a-normal-form", graph).module();
        IRModule back = PassAssert.run(GNF, anf).module();
        assertTrue(dev.relayfarm.ir.StructuralEquality.equal(back,
                dev.relayfarm.types.TypeInference.infer(dev.relayfarm.text.RelayParser.parseModule(graph)).module()));
        assertSameResults("to-a-normal-form," + GNF, graph);
    }

    @Test
    void effectsAndRecursiveFunctionsKeepTheirLets() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %r = ref(%x);
                  let %u = ref_write(%r, exp(%x));
                  let %v = ref_read(%r);
                  let %f = fn (%n: int32) -> int32 { if (less(%n, 1)) { 0 } else { %f(subtract(%n, 1)) } };
                  let %k = %f(3);
                  let %w = negative(%v);
                  (%w, %k)
                }
                """;
        assertRewrites(GNF, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %r = ref(%x);
                  let %u = ref_write(%r, exp(%x));
                  let %v = ref_read(%r);
                  let %f = fn (%n: int32) -> int32 { if (less(%n, 1)) { 0 } else { %f(subtract(%n, 1)) } };
                  (negative(%v), %f(3))
                }
                """);
        assertSameResults(GNF, before);
    }

    @Test
    void callOfAnUnknownFunctionIsAnEffect() {
        assertUnchanged(GNF, """
                def @main(%g: fn (Tensor[(2), float32]) -> Tensor[(2), float32], %x: Tensor[(2), float32]) {
                  let %y = %g(%x);
                  add(%x, 1f)
                }
                """);
        assertUnchanged(GNF, "def @main(%x: Tensor[(2), float32]) { add(exp(%x), %x) }");
    }

    @Test
    void hundredThousandLetChain() {
        IRModule in = Chains.lets(0);
        IRModule out = Chains.run(new ToGraphNormalForm(), in);
        Expr body = out.main().orElseThrow().body();
        assertFalse(body instanceof Let);
        assertTrue(dev.relayfarm.ir.ExprTraversal.postOrder(out.main().orElseThrow()).stream().noneMatch(e -> e instanceof Let));
        assertEquals(2 * Chains.N + 2, dev.relayfarm.ir.ExprTraversal.countNodes(out), "N calls and their ops, %x, @main");
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
        IRModule flow = Chains.dataflow();
        assertSame(flow, Chains.run(new ToGraphNormalForm(), flow));
    }
}
