package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.List;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.text.RelayPrinter;
import org.junit.jupiter.api.Test;

class PartialEvaluateTest {
    private static final String PE = "partial-evaluate";

    @Test
    void foldsConstantArithmetic() {
        String before = """
                def @main(%x: Tensor[(2), float32]) { add(%x, multiply(2f, add(1f, 2f))) }
                """;
        assertRewrites(PE, before, """
                def @main(%x: Tensor[(2), float32]) { add(%x, 6f) }
                """);
        assertSameResults(PE, before);
    }

    @Test
    void ifOnStaticConditionTakesItsBranch() {
        String before = """
                def @main(%x: float32) -> float32 {
                  if (less(1f, 2f)) { add(%x, 1f) } else { multiply(%x, %x) }
                }
                """;
        assertRewrites(PE, before, """
                def @main(%x: float32) -> float32 { add(%x, 1f) }
                """);
        assertSameResults(PE, before);
    }

    @Test
    void staticTupleProjection() {
        String before = """
                def @main(%x: float32, %y: float32) -> float32 {
                  let %t = (%x, add(%y, 1f), 3f);
                  multiply(%t.0, add(%t.1, %t.2))
                }
                """;
        assertRewrites(PE, before, """
                def @main(%x: float32, %y: float32) -> float32 {
                  let %a = add(%y, 1f);
                  let %b = add(%a, 3f);
                  multiply(%x, %b)
                }
                """);
        assertSameResults(PE, before);
    }

    @Test
    void closureApplicationIsInlined() {
        String before = """
                def @main(%x: float32) -> float32 {
                  let %k = 3f;
                  let %f = fn (%a: float32) -> float32 { multiply(%a, %k) };
                  %f(%f(%x))
                }
                """;
        assertRewrites(PE, before, """
                def @main(%x: float32) -> float32 {
                  let %a = multiply(%x, 3f);
                  multiply(%a, 3f)
                }
                """);
        assertSameResults(PE, before);
    }

    @Test
    void globalLoopWithStaticTripCountUnrollsToStraightLineCode() {
        String before = """
                def @loop(%i: int32, %acc: float32) -> float32 {
                  if (less(%i, 3)) { @loop(add(%i, 1), multiply(%acc, 2f)) } else { %acc }
                }
                def @main(%x: float32) -> float32 { @loop(0, %x) }
                """;
        assertRewrites(PE, before, """
                def @loop(%i: int32, %acc: float32) -> float32 {
                  let %c = less(%i, 3);
                  if (%c) {
                    let %j = add(%i, 1);
                    let %a = multiply(%acc, 2f);
                    @loop(%j, %a)
                  } else { %acc }
                }
                def @main(%x: float32) -> float32 {
                  let %a = multiply(%x, 2f);
                  let %b = multiply(%a, 2f);
                  multiply(%b, 2f)
                }
                """);
        assertSameResults(PE, before);
    }

    @Test
    void localRecursiveLoopUnrollsAndLeavesNoClosure() {
        String before = """
                def @main(%x: float32) -> float32 {
                  let %loop = fn (%i: int32, %acc: float32) -> float32 {
                    if (less(%i, 4)) { %loop(add(%i, 1), add(%acc, %x)) } else { %acc }
                  };
                  %loop(0, 0f)
                }
                """;
        assertRewrites(PE, before, """
                def @main(%x: float32) -> float32 {
                  let %a = add(0f, %x);
                  let %b = add(%a, %x);
                  let %c = add(%b, %x);
                  add(%c, %x)
                }
                """);
        assertSameResults(PE, before);
    }

    private static final String NAT = """
            type Nat { Z, S(Nat), }
            def @to_int(%n: Nat) -> int32 {
              match (%n) { Z => 0, S(%p) => add(1, @to_int(%p)) }
            }
            """;

    @Test
    void matchOnStaticConstructorTakesItsClause() {
        String before = NAT + """
                def @main(%x: int32) -> int32 { add(%x, @to_int(S(S(S(Z))))) }
                """;
        assertRewrites(PE, before, NAT.replace("add(1, @to_int(%p))", "let %r = @to_int(%p); add(1, %r)") + """
                def @main(%x: int32) -> int32 { add(%x, 3) }
                """);
        assertSameResults(PE, before);
    }

    @Test
    void listMapAndFoldOverStaticListEvaluateCompletely() {
        String program = resource("list_map_fold.relay");
        IRModule out = PassAssert.run(PE, program).module();
        String main = RelayPrinter.print(IRModule.fromMain(out.main().orElseThrow()));
        assertTrue(main.contains("12f") && !main.contains("@map") && !main.contains("@foldl"), main);
        assertSameResults(PE, program);
    }

    @Test
    void mapOverStaticListWithDynamicElementsUnrolls() {
        String before = LIST + """
                def @main(%x: float32) -> float32 {
                  let %l = @map(fn (%v: float32) -> float32 { multiply(%v, %x) }, Cons(1f, Cons(%x, Nil)));
                  @sum(%l)
                }
                """;
        IRModule out = assertRewrites(PE, before, LIST_ANF + """
                def @main(%x: float32) -> float32 {
                  let %a = multiply(1f, %x);
                  let %b = multiply(%x, %x);
                  let %c = add(%b, 0f);
                  add(%a, %c)
                }
                """);
        assertSameResults(PE, before);
        assertEquals(0, countCalls(out.main().orElseThrow().body(), "map"));
    }

    private static final String LIST = """
            type List[A] { Cons(A, List[A]), Nil, }
            def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B] {
              match (%xs) { Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)), Nil => Nil }
            }
            def @sum(%xs: List[float32]) -> float32 {
              match (%xs) { Cons(%h, %t) => add(%h, @sum(%t)), Nil => 0f }
            }
            """;

    private static final String LIST_ANF = """
            type List[A] { Cons(A, List[A]), Nil, }
            def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B] {
              match (%xs) {
                Cons(%h, %t) => let %a = %f(%h); let %b = @map(%f, %t); Cons(%a, %b),
                Nil => Nil
              }
            }
            def @sum(%xs: List[float32]) -> float32 {
              match (%xs) { Cons(%h, %t) => let %s = @sum(%t); add(%h, %s), Nil => 0f }
            }
            """;

    @Test
    void referencesInTheStaticStoreVanish() {
        String before = """
                def @main() -> float32 {
                  let %r = ref(1f);
                  let %u = ref_write(%r, 2f);
                  ref_read(%r)
                }
                """;
        assertRewrites(PE, before, "def @main() -> float32 { 2f }");
        assertSameResults(PE, before);
    }

    @Test
    void referenceHoldingDynamicValueIsForwarded() {
        String before = """
                def @main(%x: float32) -> float32 {
                  let %r = ref(%x);
                  let %u = ref_write(%r, add(ref_read(%r), 1f));
                  let %v = ref_write(%r, multiply(ref_read(%r), 2f));
                  ref_read(%r)
                }
                """;
        assertRewrites(PE, before, """
                def @main(%x: float32) -> float32 { let %a = add(%x, 1f); multiply(%a, 2f) }
                """);
        assertSameResults(PE, before);
    }

    @Test
    void natCounterLoopUnrolls() {
        String nat = """
                type Nat { Z, S(Nat), }
                def @repeat(%n: Nat, %x: float32) -> float32 {
                  match (%n) { Z => %x, S(%m) => @repeat(%m, multiply(%x, 3f)) }
                }
                """;
        String before = nat + """
                def @main(%x: float32) -> float32 { @repeat(S(S(S(Z))), %x) }
                """;
        IRModule out = assertRewrites(PE, before, nat.replace("@repeat(%m, multiply(%x, 3f))", "let %y = multiply(%x, 3f); @repeat(%m, %y)") + """
                def @main(%x: float32) -> float32 {
                  let %a = multiply(%x, 3f);
                  let %b = multiply(%a, 3f);
                  multiply(%b, 3f)
                }
                """);
        assertEquals(0, countCalls(out.main().orElseThrow().body(), "repeat"));
        assertSameResults(PE, before);
    }

    @Test
    void callThatIsNotUnfoldedForgetsTheStoreAndKeepsEffectsInOrder() {
        // @touch recurses on a dynamic flag: its inner call stays a call, which may write %r.
        String before = """
                def @touch(%r: ref(float32), %c: bool) -> () {
                  if (%c) { let %u = ref_write(%r, add(ref_read(%r), 1f)); @touch(%r, False) } else { () }
                }
                def @main(%c: bool, %x: float32) -> float32 {
                  let %r = ref(%x);
                  let %u = @touch(%r, %c);
                  let %v = ref_write(%r, multiply(ref_read(%r), 2f));
                  ref_read(%r)
                }
                """;
        IRModule out = PassAssert.run(PE, before).module();
        String main = RelayPrinter.print(IRModule.fromMain(out.main().orElseThrow()));
        // The read after the join is residual (the branch called unknown code); the last read is
        // forwarded from the write before it.
        assertEquals(1, countCalls(out.main().orElseThrow().body(), "touch"), main);
        assertTrue(main.indexOf("@touch") < main.lastIndexOf("ref_read") && main.lastIndexOf("ref_read") < main.lastIndexOf("ref_write"), main);
        assertTrue(main.strip().endsWith("}") && !main.contains("ref_read(%r)\n}"), main);
        assertSameResults(PE, before);
    }

    // ---------------------------------------------------------------- what must not change

    @Test
    void ifOnDynamicConditionIsKept() {
        String program = """
                def @main(%c: bool, %x: float32) -> float32 {
                  if (%c) { add(%x, 1f) } else { multiply(%x, %x) }
                }
                """;
        assertUnchanged(PE, program);
        assertSameResults(PE, program);
    }

    @Test
    void effectsOnUnknownReferencesStayInOrder() {
        String program = """
                def @main(%r: ref(float32), %x: float32) -> float32 {
                  let %a = ref_read(%r);
                  let %u = ref_write(%r, add(%a, %x));
                  let %b = ref_read(%r);
                  let %w = ref_write(%r, %x);
                  add(%a, %b)
                }
                """;
        IRModule out = assertRewrites(PE, program, """
                def @main(%r: ref(float32), %x: float32) -> float32 {
                  let %a = ref_read(%r);
                  let %s = add(%a, %x);
                  let %u = ref_write(%r, %s);
                  let %b = ref_read(%r);
                  let %w = ref_write(%r, %x);
                  add(%a, %b)
                }
                """);
        assertTrue(out != null);
    }

    @Test
    void unknownCallForgetsTheStore() {
        String program = """
                def @main(%g: fn (ref(float32)) -> (), %x: float32) -> float32 {
                  let %r = ref(%x);
                  let %u = %g(%r);
                  ref_read(%r)
                }
                """;
        assertUnchanged(PE, program);
    }

    @Test
    void dynamicBranchJoinForgetsWrittenCells() {
        String before = """
                def @main(%c: bool, %x: float32) -> float32 {
                  let %r = ref(1f);
                  let %s = ref(2f);
                  let %u = if (%c) { ref_write(%r, %x) } else { () };
                  add(ref_read(%r), ref_read(%s))
                }
                """;
        assertRewrites(PE, before, """
                def @main(%c: bool, %x: float32) -> float32 {
                  let %r = ref(1f);
                  let %u = if (%c) { ref_write(%r, %x) } else { () };
                  let %a = ref_read(%r);
                  add(%a, 2f)
                }
                """);
        assertSameResults(PE, before);
    }

    @Test
    void recursiveFunctionOnDynamicInputStaysACall() {
        String before = """
                def @fact(%n: int32) -> int32 {
                  if (equal(%n, 0)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) }
                }
                def @main(%n: int32) -> int32 { @fact(%n) }
                """;
        IRModule out = assertRewrites(PE, before, """
                def @fact(%n: int32) -> int32 {
                  let %c = equal(%n, 0);
                  if (%c) { 1 } else { let %m = subtract(%n, 1); let %r = @fact(%m); multiply(%n, %r) }
                }
                def @main(%n: int32) -> int32 { @fact(%n) }
                """);
        assertEquals(1, countCalls(out.main().orElseThrow().body(), "fact"));
        assertSameResults(PE, before);
    }

    @Test
    void recursionWithStaticCounterButDynamicExitStaysACall() {
        String before = """
                def @loop(%i: int32, %n: int32, %acc: float32) -> float32 {
                  if (less(%i, %n)) { @loop(add(%i, 1), %n, multiply(%acc, 2f)) } else { %acc }
                }
                def @main(%n: int32, %x: float32) -> float32 { @loop(0, %n, %x) }
                """;
        IRModule out = PassAssert.run(PE, before).module();
        // One iteration is peeled (its counter is static), then the loop is called again.
        assertEquals(1, countCalls(out.main().orElseThrow().body(), "loop"), RelayPrinter.print(out));
        assertSameResults(PE, before);
    }

    @Test
    void factorialOfAConstantIsComputed() {
        String before = """
                def @fact(%n: int32) -> int32 {
                  if (equal(%n, 0)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) }
                }
                def @main() -> int32 { @fact(5) }
                """;
        IRModule out = PassAssert.run(PE, before).module();
        assertEquals("def @main() -> int32 {\n  120\n}", RelayPrinter.print(IRModule.fromMain(out.main().orElseThrow())).strip().replaceAll("(?s)^#\\[version[^\\n]*\\n", ""));
        assertSameResults(PE, before);
    }

    @Test
    void fusedPrimitiveFunctionsAreCalledNotUnfolded() {
        String program = """
                def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
                  let %f = fn (%a: Tensor[(4), float32], Primitive=1) -> Tensor[(4), float32] { exp(add(%a, 1f)) };
                  %f(%x)
                }
                """;
        assertUnchanged(PE, program);
        assertSameResults(PE, program);
    }

    /**
     * 100,000 lets that fold to a constant (and vanish), then a 50,000-deep dataflow nest over the
     * parameter using that constant, which comes out as 50,000 lets (A-normal form). Built directly:
     * parsing 150k lines of text is slow.
     */
    @Test
    void longLetChainAndDeepDataflowAreEvaluatedIteratively() {
        int lets = 100_000;
        int depth = 50_000;
        Var x0 = Var.fresh("x0", TensorType.scalar(DType.FLOAT32));
        List<Var> vars = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        Expr prev = new Constant(NDArray.scalar(0f));
        for (int i = 0; i < lets; i++) {
            Var c = Var.fresh("c" + i);
            vars.add(c);
            values.add(Call.op("add", prev, new Constant(NDArray.scalar(1f))));
            prev = c;
        }
        Expr nest = x0;
        for (int i = 0; i < depth; i++) nest = Call.op("add", nest, i == 0 ? prev : new Constant(NDArray.scalar(-1f)));
        Expr body = nest;
        for (int i = vars.size() - 1; i >= 0; i--) body = new Let(vars.get(i), values.get(i), body);
        IRModule in = TypeInference.infer(IRModule.fromMain(new Function(List.of(x0), body))).module();
        PassResult r = PassAssert.run(PE, in);
        assertTrue(r.changed());
        Function main = r.module().main().orElseThrow();
        assertEquals(depth - 1, ExprTraversal.postOrder(main.body()).stream().filter(e -> e instanceof Let).count());
        NDArray x = NDArray.scalar(0.5f);
        assertEquals(Interpreter.runMain(in, x).asTensor().getDouble(0), Interpreter.runMain(r.module(), x).asTensor().getDouble(0), 0.0);
        assertTrue(main.body() instanceof Let l && l.value() instanceof Call c && c.args().get(1) instanceof Constant k
                && k.data().getDouble(0) == lets, "the folded constant feeds the innermost add");
    }

    private static int countCalls(Expr body, String global) {
        int n = 0;
        for (Expr e : ExprTraversal.postOrder(body)) {
            if (e instanceof Call c && c.callee() instanceof GlobalVar g && g.name().equals(global)) n++;
        }
        return n;
    }

    private static String resource(String name) {
        try (var in = PartialEvaluateTest.class.getResourceAsStream("/relay/" + name)) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
