package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EliminateCommonSubexprTest {
    private static final String PASS = "eliminate-common-subexpr";

    @Test
    void mergesADiamond() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = exp(%x);
                  %1 = exp(%x);
                  add(%0, %1)
                }
                """;
        IRModule out = assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = exp(%x);
                  add(%0, %0)
                }
                """);
        Call add = (Call) out.main().orElseThrow().body();
        assertSame(add.args().get(0), add.args().get(1), "merged into one shared node");
        assertSameResults(PASS, before);
    }

    @Test
    void mergesChainsBottomUpWithSmallConstantsByValue() {
        String before = """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = add(exp(%x), 1f);
                  %1 = add(exp(%x), 1f);
                  %2 = sum(%0, axis=[1]);
                  %3 = sum(%1, axis=[1]);
                  (%2, %3, sum(%1, axis=[0]))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2, 3), float32]) {
                  %0 = add(exp(%x), 1f);
                  %1 = sum(%0, axis=[1]);
                  (%1, %1, sum(%0, axis=[0]))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void mergesLetBoundDuplicatesIntoTheVariable() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %a = exp(%x);
                  let %b = exp(%x);
                  let %c = (%a, %b);
                  add(%c.0, multiply(%b, exp(%x)))
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %a = exp(%x);
                  let %b = %a;
                  let %c = (%a, %b);
                  add(%c.0, multiply(%b, %a))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void mergesProjectionsAndTuples() {
        String before = """
                def @main(%x: Tensor[(4), float32]) {
                  %0 = split(%x, indices_or_sections=2);
                  %1 = concatenate((%0.0, %0.1));
                  %2 = concatenate((%0.0, %0.1));
                  add(%1, %2)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(4), float32]) {
                  %0 = split(%x, indices_or_sections=2);
                  %1 = concatenate((%0.0, %0.1));
                  add(%1, %1)
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void differentOpsAttrsOrArgumentsStay() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
                  (sum(%x, axis=[0]), sum(%x, axis=[1]), exp(%x), exp(%y), negative(%x), add(%x, 1f), add(%x, 2f))
                }
                """);
    }

    @Test
    void effectsAndFunctionCallsAreNotMerged() {
        assertUnchanged(PASS, """
                def @f(%a: Tensor[(2), float32]) { %a }
                def @main(%x: Tensor[(2), float32]) {
                  let %r = ref(%x);
                  let %u = ref_write(%r, exp(ref_read(%r)));
                  let %v = ref_write(%r, exp(ref_read(%r)));
                  (@f(%x), @f(%x), ref_read(%r))
                }
                """);
    }

    @Test
    void dropoutIsSkippedByDefaultAndTheSkipListIsAnOption() {
        String text = """
                def @main(%x: Tensor[(2), float32]) {
                  %0 = nn.dropout(%x);
                  %1 = nn.dropout(%x);
                  add(%0.0, %1.0)
                }
                """;
        assertUnchanged(PASS, text);
        IRModule in = TypeInference.infer(RelayParser.parseModule(text, "t")).module();
        PassResult r = new Sequential("t", List.of(new EliminateCommonSubexpr(new EliminateCommonSubexpr.Options(Set.of()))))
                .run(in, new PassContext(PassOptions.level(3)));
        assertTrue(r.changed());
        Call add = (Call) r.module().main().orElseThrow().body();
        assertSame(add.args().get(0), add.args().get(1));
    }

    @Test
    void noMergeAcrossBranchesFunctionsOrOutOfALetScope() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  %0 = if (%c) { exp(%x) } else { exp(%x) };
                  %1 = fn (%y: Tensor[(2), float32]) { add(exp(%x), %y) };
                  %2 = (let %a = exp(%x); %a);
                  (%0, %1(%x), %2, exp(%x))
                }
                """);
    }

    @Test
    void mergesInsideABranchAndInsideAFunctionBody() {
        String before = """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  if (%c) { add(exp(%x), exp(%x)) } else { negative(%x) }
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(2), float32], %c: bool) {
                  if (%c) { %0 = exp(%x); add(%0, %0) } else { negative(%x) }
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void longChains() {
        for (boolean lets : new boolean[] {false, true}) {
            Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
            // Each step computes negative(prev) twice; the duplicate merges.
            IRModule in = LongChains.chain(lets, x, e -> Call.op("add", Call.op("negative", e), Call.op("negative", e)), e -> e);
            PassResult r = LongChains.run(new EliminateCommonSubexpr(), in);
            assertTrue(r.changed());
            int negatives = 0;
            for (Expr e : ExprTraversal.postOrder(r.module().main().orElseThrow())) {
                if (e instanceof Call c && c.callee() instanceof dev.relayfarm.ir.Op op && op.name().equals("negative")) negatives++;
            }
            assertEquals(LongChains.LENGTH, negatives, "lets=" + lets);
            assertFalse(r.module().main().orElseThrow().body() instanceof Let l && !(l.value() instanceof Call), "lets=" + lets);
        }
    }
}
