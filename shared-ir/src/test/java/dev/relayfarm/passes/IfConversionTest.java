package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class IfConversionTest {
    private static final String PASS = "if-conversion";

    @Test
    void cheapDataflowBranchesBecomeASelect() {
        String before = """
                def @main(%c: bool, %x: Tensor[(5), float32]) {
                  let %y = if (%c) { exp(%x) } else { let %n = negative(%x); add(%n, 1f) };
                  multiply(%y, 2f)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%c: bool, %x: Tensor[(5), float32]) {
                  let %y = where(%c, exp(%x), let %n = negative(%x); add(%n, 1f));
                  multiply(%y, 2f)
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void tupleResultsSelectFieldByFieldAndInnerIfsConvertFirst() {
        String before = """
                def @main(%c: bool, %d: bool, %x: Tensor[(2, 3), float32], %y: Tensor[(3), float32]) {
                  if (%c) { (%x, if (%d) { %y } else { exp(%y) }) } else { (add(%x, %y), %y) }
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%c: bool, %d: bool, %x: Tensor[(2, 3), float32], %y: Tensor[(3), float32]) {
                  (where(%c, %x, add(%x, %y)), where(%c, where(%d, %y, exp(%y)), %y))
                }
                """);
        assertSameResults(PASS, before);
    }

    @Test
    void costlyEffectfulOrTrappingBranchesStay() {
        // a reduction, an opaque operator, an integer division, an index by data (ONNX's guarded Gather),
        // a closure call, a dynamic shape
        assertUnchanged(PASS, """
                def @main(%c: bool, %x: Tensor[(4, 4), float32], %i: Tensor[(4), int32], %d: Tensor[(?), float32]) {
                  let %f = fn (%v: Tensor[(4, 4), float32]) { exp(%v) };
                  (if (%c) { sum(%x, axis=[1]) } else { %x.0 },
                   if (%c) { nn.softmax(%x) } else { %x },
                   if (%c) { divide(%i, %i) } else { %i },
                   if (%c) { take(%x, %i, axis=0) } else { %x },
                   if (%c) { %f(%x) } else { %x },
                   if (%c) { exp(%d) } else { %d })
                }
                """.replace("%x.0", "take(%x, 0, axis=0)"));
    }

    @Test
    void branchesOverTheOperatorBudgetStay() {
        String text = """
                def @main(%c: bool, %x: Tensor[(5), float32]) {
                  if (%c) { exp(exp(exp(%x))) } else { %x }
                }
                """;
        dev.relayfarm.ir.IRModule in = dev.relayfarm.types.TypeInference.infer(dev.relayfarm.text.RelayParser.parseModule(text, "input")).module();
        PassContext ctx = new PassContext(PassOptions.level(1));
        Sequential two = new Sequential("t", java.util.List.of(new IfConversion(new IfConversion.Options(2))));
        Sequential three = new Sequential("t", java.util.List.of(new IfConversion(new IfConversion.Options(3))));
        assertEquals(false, two.run(in, ctx).changed());
        assertEquals(true, three.run(in, ctx).changed());
    }
}
