package dev.relayfarm.gen;

import dev.relayfarm.ir.WellFormed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.StructuralEquality.Mismatch;
import dev.relayfarm.ir.StructuralHash;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.text.MismatchText;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/** print → parse gives a structurally equal module, for every generated module. */
class TextRoundTripTest {
    /** Modules for the text round trip (see {@link #shadowedTypeParametersRoundTrip()}). */
    static IRModule module(long seed) {
        return TextForm.of(RandomModules.module(seed, RandomModules.Options.DEFAULT.withShadowTypeVars(false)));
    }

    @Test
    void printThenParseIsStructurallyEqual() {
        for (long seed = 0; seed < GeneratorTest.MODULES; seed++) {
            IRModule m = module(seed);
            String text = RelayPrinter.print(m);
            IRModule parsed = parse(text, seed);
            Optional<Mismatch> d = StructuralEquality.diff(m, parsed);
            if (d.isPresent()) fail(report(seed, "print -> parse differs", MismatchText.render(d.get()), text));
            assertEquals(StructuralHash.hash(m), StructuralHash.hash(parsed), "seed " + seed);
            assertEquals(List.of(), WellFormed.problems(parsed), "seed " + seed);
        }
    }

    @Test
    void printingIsAFixedPointAfterOneRoundTrip() {
        // Names are settled by the first print; printing the parsed module must give the same text.
        for (long seed = 0; seed < GeneratorTest.MODULES; seed++) {
            String text = RelayPrinter.print(module(seed));
            String again = RelayPrinter.print(parse(text, seed));
            if (!text.equals(again)) fail(report(seed, "print(parse(text)) != text", "second print:\n" + again, text));
        }
    }

    @Test
    void alphaRenamedModulesPrintToEquivalentText() {
        for (long seed = 0; seed < 200; seed++) {
            IRModule m = module(seed);
            IRModule renamed = AlphaRename.rename(m);
            IRModule parsed = parse(RelayPrinter.print(renamed), seed);
            Optional<Mismatch> d = StructuralEquality.diff(m, parsed);
            if (d.isPresent()) fail(report(seed, "renamed print -> parse differs", MismatchText.render(d.get()), RelayPrinter.print(renamed)));
        }
    }

    @Test
    @Disabled("RelayPrinter prints type parameters by name only: in def @f[A] { fn [A](%x: Tree[A_outer]) }"
            + " the outer A is captured by the inner one after parsing (seed 4). Needs type-parameter renaming"
            + " like the one the printer does for variables; reported to the text owner.")
    void shadowedTypeParametersRoundTrip() {
        // def @f[A](...) { fn [A](%x: A_outer) {...} }: an inner type parameter named like an outer one
        // while the body still refers to the outer one. The printer must rename one of them.
        for (long seed = 0; seed < GeneratorTest.MODULES; seed++) {
            IRModule m = TextForm.of(RandomModules.module(seed));
            String text = RelayPrinter.print(m);
            Optional<Mismatch> d = StructuralEquality.diff(m, parse(text, seed));
            if (d.isPresent()) fail(report(seed, "print -> parse differs", MismatchText.render(d.get()), text));
        }
    }

    @Test
    void jsonAndTextDescribeTheSameProgram() {
        // module -> JSON -> module prints exactly as the module does.
        for (long seed = 0; seed < 300; seed++) {
            IRModule m = module(seed);
            assertEquals(RelayPrinter.print(m), RelayPrinter.print(IrJson.fromJson(IrJson.toJson(m))), "seed " + seed);
        }
    }

    static IRModule parse(String text, long seed) {
        try {
            return RelayParser.parseModule(text, "seed-" + seed + ".relay");
        } catch (RuntimeException e) {
            throw new AssertionError(report(seed, "printed text does not parse", e.getMessage(), text), e);
        }
    }

    static String report(long seed, String what, String detail, String text) {
        return "seed " + seed + ": " + what + "\n" + detail + "\n--- printed text ---\n" + text;
    }
}
