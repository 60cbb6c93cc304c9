package dev.relayfarm.passes;

import static dev.relayfarm.passes.PassAssert.assertRewrites;
import static dev.relayfarm.passes.PassAssert.assertSameResults;
import static dev.relayfarm.passes.PassAssert.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import org.junit.jupiter.api.Test;

class UnrollLoopsTest {
    private static final String PASS = "unroll-loops";

    @Test
    void localLoopWithStaticTripCountBecomesDataflow() {
        String before = """
                def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {
                  let %loop = fn (%i: int64, %acc: Tensor[(3), float32]) -> Tensor[(3), float32] {
                    if (less(%i, 3i64)) { %loop(add(%i, 1i64), multiply(%acc, %x)) } else { %acc }
                  };
                  %loop(0i64, %x)
                }
                """;
        assertRewrites(PASS, before, """
                def @main(%x: Tensor[(3), float32]) {
                  multiply(multiply(multiply(%x, %x), %x), %x)
                }
                """);
        assertSameResults(PASS, before);
    }

    /** The importer's Scan: outputs grow by concatenation from an empty accumulator, so their type has a "?" until unrolled. */
    @Test
    void scanAccumulatorGetsAStaticTypeOnceUnrolled() {
        String before = """
                def @main(%x: Tensor[(2, 4), float32]) -> Tensor[(?, 4), float32] {
                  let %scan = fn (%i: int64, %acc: Tensor[(?, 4), float32]) -> Tensor[(?, 4), float32] {
                    if (less(%i, 2i64)) {
                      %0 = take(%x, %i, axis=0, mode="fast");
                      %1 = expand_dims(exp(%0), axis=0);
                      %scan(add(%i, 1i64), concatenate((%acc, %1), axis=0))
                    } else { %acc }
                  };
                  %scan(0i64, zeros(shape=[0, 4], dtype="float32"))
                }
                """;
        IRModule out = PassAssert.run(PASS, before).module();
        String text = RelayPrinter.print(out);
        assertFalse(text.contains("fn ("), text);
        assertEquals("Tensor[(2, 4), float32]", TypeInference.infer(out).module().main().orElseThrow().retType().toString(), text);
        assertSameResults(PASS, before);
        // With simplify-expr, the empty initial accumulator disappears from the concatenation.
        String simplified = RelayPrinter.print(PassAssert.run(PASS + ",simplify-expr", before).module());
        assertFalse(simplified.contains("meta[relay.Constant]"), simplified);
    }

    @Test
    void loopWhoseTripCountDependsOnInputsStays() {
        assertUnchanged(PASS, """
                def @main(%n: int64, %x: float32) -> float32 {
                  let %loop = fn (%i: int64, %acc: float32) -> float32 {
                    if (less(%i, %n)) { %loop(add(%i, 1i64), multiply(%acc, 2f)) } else { %acc }
                  };
                  %loop(0i64, %x)
                }
                """);
    }

    @Test
    void loopLongerThanTheBoundStaysWhole() {
        String text = """
                def @main(%x: float32) -> float32 {
                  let %loop = fn (%i: int64, %acc: float32) -> float32 {
                    if (less(%i, 5i64)) { %loop(add(%i, 1i64), multiply(%acc, 2f)) } else { %acc }
                  };
                  %loop(0i64, %x)
                }
                """;
        IRModule in = TypeInference.infer(RelayParser.parseModule(text, "input")).module();
        PassResult r = new UnrollLoops(new UnrollLoops.Options(4, 10_000)).run(in, new PassContext(PassOptions.level(1)));
        assertFalse(r.changed());
        assertSame(in, r.module());
        // One more iteration allowed, and it unrolls.
        PassResult r5 = new UnrollLoops(new UnrollLoops.Options(5, 10_000)).run(in, new PassContext(PassOptions.level(1)));
        assertTrue(r5.changed());
        assertFalse(RelayPrinter.print(r5.module()).contains("fn ("));
        // A budget smaller than what unrolling adds keeps the loop too (50 iterations add ~100 nodes; 5 add none).
        IRModule fifty = TypeInference.infer(RelayParser.parseModule(text.replace("5i64", "50i64"), "input")).module();
        assertFalse(new UnrollLoops(new UnrollLoops.Options(64, 40)).run(fifty, new PassContext(PassOptions.level(1))).changed());
        assertTrue(new UnrollLoops(new UnrollLoops.Options(64, 40)).run(in, new PassContext(PassOptions.level(1))).changed());
    }

    @Test
    void globalsWithoutLoopsAreLeftAlone() {
        assertUnchanged(PASS, """
                def @main(%x: Tensor[(3), float32]) -> Tensor[(3), float32] {
                  let %y = add(1f, 2f);
                  multiply(%x, %y)
                }
                """);
    }

    @Test
    void runsFirstInTheStandardPipeline() {
        assertEquals(PASS, OptPipeline.ORDER.getFirst());
        assertEquals(1, PassRegistry.get(PASS).info().optLevel());
    }
}
