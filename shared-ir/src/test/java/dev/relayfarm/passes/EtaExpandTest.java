package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.*;

import dev.relayfarm.ir.GlobalVar;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import org.junit.jupiter.api.Test;

class EtaExpandTest {
    private static final String ETA = "eta-expand";

    @Test
    void globalUsedAsAValueBecomesAFunctionCallsStay() {
        String before = """
                def @f(%y: Tensor[(2), float32]) -> Tensor[(2), float32] { negative(%y) }
                def @main(%x: Tensor[(2), float32]) { let %g = @f; add(%g(%x), @f(%x)) }
                """;
        assertRewrites(ETA, before, """
                def @f(%y: Tensor[(2), float32]) -> Tensor[(2), float32] { negative(%y) }
                def @main(%x: Tensor[(2), float32]) {
                  let %g = fn (%a: Tensor[(2), float32]) -> Tensor[(2), float32] { @f(%a) };
                  add(%g(%x), @f(%x))
                }
                """);
        assertSameResults(ETA, before);
    }

    @Test
    void constructorsAsValuesBecomeFunctionsEachUseItsOwn() {
        String before = """
                type List[A] { Cons(A, List[A]), Nil }
                type Box { MkBox(Tensor[(2), float32]) }
                def @main(%x: Tensor[(2), float32], %n: int32) {
                  let %c = Cons;
                  let %d = Cons;
                  let %b = MkBox;
                  (%c(%x, Nil), %d(%n, Nil), %b(%x), Cons(%x, Nil))
                }
                """;
        assertRewrites(ETA, before, """
                type List[A] { Cons(A, List[A]), Nil }
                type Box { MkBox(Tensor[(2), float32]) }
                def @main(%x: Tensor[(2), float32], %n: int32) {
                  let %c = fn (%h, %t) { Cons(%h, %t) };
                  let %d = fn (%h2, %t2) { Cons(%h2, %t2) };
                  let %b = fn (%v: Tensor[(2), float32]) -> Box { MkBox(%v) };
                  (%c(%x, Nil), %d(%n, Nil), %b(%x), Cons(%x, Nil))
                }
                """);
    }

    @Test
    void optionsSelectWhatIsExpanded() {
        String text = """
                type Box { MkBox(Tensor[(2), float32]) }
                def @f(%y: Tensor[(2), float32]) { negative(%y) }
                def @main(%x: Tensor[(2), float32]) { (@f, MkBox) }
                """;
        IRModule in = TypeInference.infer(RelayParser.parseModule(text)).module();
        IRModule onlyGlobals = new Sequential("t", List.of(new EtaExpand(new EtaExpand.Options(false, true))))
                .run(in, new PassContext(PassOptions.level(3).withValidate(true))).module();
        String printed = dev.relayfarm.text.RelayPrinter.print(onlyGlobals);
        assertTrue(printed.contains("@f(") && printed.contains("MkBox)"), printed);
        IRModule none = new Sequential("t", List.of(new EtaExpand(new EtaExpand.Options(false, false))))
                .run(in, new PassContext(PassOptions.level(3))).module();
        assertSame(in, none);
    }

    @Test
    void nothingToExpand() {
        assertUnchanged(ETA, """
                type List[A] { Cons(A, List[A]), Nil }
                def @f(%y: Tensor[(2), float32]) { negative(%y) }
                def @main(%x: Tensor[(2), float32]) {
                  let %e: List[Tensor[(2), float32]] = Nil;
                  (@f(%x), Cons(%x, Nil), %e)
                }
                """);
    }

    @Test
    void secondRunChangesNothing() {
        IRModule once = PassAssert.run(ETA, """
                def @f(%y: Tensor[(2), float32]) { negative(%y) }
                def @main(%x: Tensor[(2), float32]) { let %g = @f; %g(%x) }
                """).module();
        assertFalse(PassAssert.run(ETA, once).changed());
    }

    @Test
    void hundredThousandChain() {
        IRModule flow = Chains.dataflow();
        assertSame(flow, Chains.run(new EtaExpand(), flow));
        IRModule lets = Chains.lets(0);
        assertSame(lets, Chains.run(new EtaExpand(), lets));
    }
}
