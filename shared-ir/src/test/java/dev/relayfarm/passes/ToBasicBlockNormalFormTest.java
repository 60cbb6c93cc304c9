package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.ir.IRModule;
import org.junit.jupiter.api.Test;

class ToBasicBlockNormalFormTest {
    private static final String BBNF = "to-basic-block-normal-form";

    @Test
    void valueSharedByBothBranchesIsBoundOutsideTheRestStaysDataflow() {
        String before = """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  %0 = exp(%x);
                  if (%c) { add(negative(%0), 1f) } else { %0 }
                }
                """;
        assertRewrites(BBNF, before, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %a = exp(%x);
                  if (%c) { add(negative(%a), 1f) } else { %a }
                }
                """);
        assertSameResults(BBNF, before);
    }

    @Test
    void valueUsedInTheConditionAndABranch() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  %0 = sum(exp(%x));
                  if (greater(%0, 1f)) { multiply(%x, %0) } else { %x }
                }
                """;
        assertRewrites(BBNF, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %s = sum(exp(%x));
                  if (greater(%s, 1f)) { multiply(%x, %s) } else { %x }
                }
                """);
        assertSameResults(BBNF, before);
    }

    @Test
    void valueSharedWithANestedFunctionBodyAndInsideOneBranchOnly() {
        String before = """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  %0 = exp(%x);
                  let %f = fn (%y: Tensor[(2), float32]) { add(%y, %0) };
                  if (%c) { %1 = negative(%x); add(%1, %1) } else { %f(%0) }
                }
                """;
        assertRewrites(BBNF, before, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %a = exp(%x);
                  let %f = fn (%y: Tensor[(2), float32]) { add(%y, %a) };
                  if (%c) { %1 = negative(%x); add(%1, %1) } else { %f(%a) }
                }
                """);
        assertSameResults(BBNF, before);
    }

    @Test
    void effectsInsideExpressionsAreBoundInOrderButNotTheBlockResult() {
        String before = """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %r = ref(%x);
                  %0 = if (%c) { ref_write(%r, exp(%x)) } else { () };
                  (%0, add(ref_read(%r), 1f))
                }
                """;
        assertRewrites(BBNF, before, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  let %r = ref(%x);
                  let %i = if (%c) { ref_write(%r, exp(%x)) } else { () };
                  let %v = ref_read(%r);
                  (%i, add(%v, 1f))
                }
                """);
        assertSameResults(BBNF, before);
    }

    @Test
    void blockLocalDataflowIsLeftAlone() {
        assertUnchanged(BBNF, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  %0 = exp(%x);
                  %1 = add(%0, %0);
                  if (%c) { %2 = negative(%x); multiply(%2, %2) } else { %1 }
                }
                """);
        assertUnchanged(BBNF, """
                def @main(%x: Tensor[(2), float32]) {
                  let %r = ref(%x);
                  ref_read(%r)
                }
                """);
    }

    @Test
    void itsOwnOutputIsAFixedPoint() {
        IRModule once = PassAssert.run(BBNF, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  %0 = exp(%x);
                  let %r = ref(%0);
                  %1 = if (%c) { add(%0, ref_read(%r)) } else { %0 };
                  (%1, ref_read(%r))
                }
                """).module();
        assertFalse(PassAssert.run(BBNF, once).changed());
    }

    @Test
    void hundredThousandChains() {
        IRModule flow = Chains.dataflow();
        assertSame(flow, Chains.run(new ToBasicBlockNormalForm(), flow));
        IRModule lets = Chains.lets(0);
        assertSame(lets, Chains.run(new ToBasicBlockNormalForm(), lets));
    }
}
