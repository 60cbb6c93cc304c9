package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.Let;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import org.junit.jupiter.api.Test;

class InlineTest {
    private static final String INLINE = "inline";

    @Test
    void markedCallsAreInlinedWithArgumentsBoundOnceAndTheGlobalDropped() {
        String before = """
                def @sq(%y: Tensor[(2), float32], Inline=1) { multiply(%y, %y) }
                def @main(%x: Tensor[(2), float32]) { add(@sq(exp(%x)), @sq(%x)) }
                """;
        assertRewrites(INLINE, before, """
                def @main(%x: Tensor[(2), float32]) {
                  add(let %y: Tensor[(2), float32] = exp(%x); multiply(%y, %y), multiply(%x, %x))
                }
                """);
        assertSameResults(INLINE, before);
    }

    @Test
    void chainsOfMarkedFunctionsInlineRecursivelyUnmarkedStay() {
        String before = """
                def @a(%p: Tensor[(2), float32], Inline=1) { negative(%p) }
                def @b(%q: Tensor[(2), float32], Inline=1) { @a(@c(%q)) }
                def @c(%r: Tensor[(2), float32]) { exp(%r) }
                def @main(%x: Tensor[(2), float32]) { @b(%x) }
                """;
        assertRewrites(INLINE, before, """
                def @c(%r: Tensor[(2), float32]) { exp(%r) }
                def @main(%x: Tensor[(2), float32]) { let %p: Tensor[(2), float32] = @c(%x); negative(%p) }
                """);
        assertSameResults(INLINE, before);
    }

    @Test
    void markedGlobalStillUsedAsAValueIsKept() {
        String before = """
                def @neg(%y: Tensor[(2), float32], Inline=1) { negative(%y) }
                def @main(%x: Tensor[(2), float32]) { let %f = @neg; (@neg(%x), %f(%x)) }
                """;
        assertRewrites(INLINE, before, """
                def @neg(%y: Tensor[(2), float32], Inline=1) { negative(%y) }
                def @main(%x: Tensor[(2), float32]) { let %f = @neg; (negative(%x), %f(%x)) }
                """);
        assertSameResults(INLINE, before);
    }

    @Test
    void inlinedBodiesGetFreshBindersAtEverySite() {
        String before = """
                def @g(%y: Tensor[(2), float32], Inline=1) { let %t = exp(%y); add(%t, %t) }
                def @main(%x: Tensor[(2), float32]) { (@g(%x), @g(%x)) }
                """;
        // The harness's debug check rejects a variable bound twice.
        assertRewrites(INLINE, before, """
                def @main(%x: Tensor[(2), float32]) {
                  (let %t1 = exp(%x); add(%t1, %t1), let %t2 = exp(%x); add(%t2, %t2))
                }
                """);
        assertSameResults(INLINE, before);
    }

    @Test
    void unmarkedAndZeroMarkedAreNotInlined() {
        assertUnchanged(INLINE, """
                def @f(%y: Tensor[(2), float32], Inline=0) { negative(%y) }
                def @g(%y: Tensor[(2), float32]) { exp(%y) }
                def @main(%x: Tensor[(2), float32]) { @g(@f(%x)) }
                """);
    }

    @Test
    void recursiveAndPolymorphicMarkedFunctionsAreErrorsNamingThem() {
        PassException rec = assertThrows(PassException.class, () -> PassAssert.run(INLINE, """
                def @f(%n: int32, Inline=1) -> int32 { if (less(%n, 1)) { 0 } else { @g(subtract(%n, 1)) } }
                def @g(%n: int32) -> int32 { @f(%n) }
                def @main(%x: int32) { @f(%x) }
                """));
        assertTrue(rec.getMessage().contains("@f is marked Inline=1 but is recursive (@f -> @g -> @f)"), rec.getMessage());
        PassException poly = assertThrows(PassException.class, () -> PassAssert.run(INLINE, """
                def @id[A](%a: A, Inline=1) -> A { %a }
                def @main(%x: int32) { @id(%x) }
                """));
        assertTrue(poly.getMessage().contains("@id is marked Inline=1 but is polymorphic"), poly.getMessage());
    }

    @Test
    void hundredThousandLetChainInsideAnInlinedFunction() {
        IRModule chain = Chains.lets(0);
        Function body = chain.main().orElseThrow();
        Function marked = body.withAttrs(Attrs.of(Inline.ATTR, new AttrValue.IntValue(1)));
        Var x = Var.fresh("x", TensorType.of(DType.FLOAT32, 2));
        IRModule in = TypeInference.infer(IRModule.EMPTY.withFunction("chain", marked)
                .withFunction("main", new Function(List.of(x), new Call(new GlobalVar("chain"), List.of(x))))).module();
        IRModule out = Chains.run(new Inline(), in);
        assertEquals(1, out.functions().size());
        Expr e = out.main().orElseThrow().body();
        int lets = 0;
        while (e instanceof Let l) {
            lets++;
            e = l.body();
        }
        assertEquals(Chains.N, lets);
        SameResults.assertSameResults(in, out, 1, new Tolerance(1e-6, 1e-7));
    }
}
