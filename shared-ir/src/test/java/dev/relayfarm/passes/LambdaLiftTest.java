package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LambdaLiftTest {
    private static final String LIFT = "lambda-lift";

    @Test
    void closedFunctionBecomesAGlobalReference() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %f = fn (%y: Tensor[(2), float32]) { negative(%y) };
                  %f(%x)
                }
                """;
        assertRewrites(LIFT, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %f = @main_lifted_0;
                  %f(%x)
                }
                def @main_lifted_0(%y: Tensor[(2), float32]) -> Tensor[(2), float32] { negative(%y) }
                """);
        assertSameResults(LIFT, before);
    }

    @Test
    void capturedVariablesBecomeAClosureBuildingCall() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  %0 = exp(%x);
                  let %f = fn (%y: Tensor[(2), float32]) { add(%y, %0) };
                  %f(%x)
                }
                """;
        assertRewrites(LIFT, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %f = @main_lifted_0(%x);
                  %f(%x)
                }
                def @main_lifted_0(%x1: Tensor[(2), float32]) {
                  fn (%y: Tensor[(2), float32], Closure=1) -> Tensor[(2), float32] { add(%y, exp(%x1)) }
                }
                """);
        assertSameResults(LIFT, before);
    }

    @Test
    void recursiveLetBoundFunctionRefersToItsGlobal() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %loop = fn (%n: int32, %acc: Tensor[(2), float32]) -> Tensor[(2), float32] {
                    if (less(%n, 1)) { %acc } else { %loop(subtract(%n, 1), add(%acc, %x)) }
                  };
                  %loop(3, %x)
                }
                """;
        assertRewrites(LIFT, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %loop = @main_lifted_0(%x);
                  %loop(3, %x)
                }
                def @main_lifted_0(%x1: Tensor[(2), float32]) {
                  fn (%n: int32, %acc: Tensor[(2), float32], Closure=1) -> Tensor[(2), float32] {
                    if (less(%n, 1)) { %acc } else { @main_lifted_0(%x1)(subtract(%n, 1), add(%acc, %x1)) }
                  }
                }
                """);
        assertSameResults(LIFT, before);
    }

    @Test
    void nestedFunctionsLiftInnerFirstAndTheOuterCapturesWhatTheInnerDid() {
        String before = """
                def @main(%x: Tensor[(2), float32]) {
                  let %outer = fn (%y: Tensor[(2), float32]) {
                    let %inner = fn (%z: Tensor[(2), float32]) { multiply(%z, %x) };
                    %inner(%y)
                  };
                  %outer(%x)
                }
                """;
        assertRewrites(LIFT, before, """
                def @main(%x: Tensor[(2), float32]) {
                  let %outer = @main_lifted_1(%x);
                  %outer(%x)
                }
                def @main_lifted_0(%x1: Tensor[(2), float32]) {
                  fn (%z: Tensor[(2), float32], Closure=1) -> Tensor[(2), float32] { multiply(%z, %x1) }
                }
                def @main_lifted_1(%x2: Tensor[(2), float32]) {
                  fn (%y: Tensor[(2), float32], Closure=1) -> Tensor[(2), float32] {
                    let %inner = @main_lifted_0(%x2);
                    %inner(%y)
                  }
                }
                """);
        assertSameResults(LIFT, before);
    }

    @Test
    void noNestedFunctionsPrimitivesAndAnEarlierRunsOutputAreLeftAlone() {
        assertUnchanged(LIFT, "def @main(%x: Tensor[(2), float32]) { negative(%x) }");
        assertUnchanged(LIFT, """
                def @main(%x: Tensor[(2), float32]) {
                  %0 = fn (%p: Tensor[(2), float32], Primitive=1) { exp(%p) };
                  %0(%x)
                }
                """);
        IRModule once = PassAssert.run(LIFT, """
                def @main(%x: Tensor[(2), float32]) {
                  let %f = fn (%y: Tensor[(2), float32]) { add(%y, %x) };
                  %f(%x)
                }
                """).module();
        assertFalse(PassAssert.run(LIFT, once).changed());
    }

    @Test
    void hundredThousandLetChainInsideALiftedFunction() {
        IRModule chain = Chains.lets(0);
        Function inner = chain.main().orElseThrow();
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
        Var f = Var.fresh("f");
        IRModule in = TypeInference.infer(IRModule.fromMain(new Function(List.of(x),
                new Let(f, inner, new Call(f, List.of(x)))))).module();
        IRModule out = Chains.run(new LambdaLift(), in);
        assertEquals(2, out.functions().size());
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
    }
}
