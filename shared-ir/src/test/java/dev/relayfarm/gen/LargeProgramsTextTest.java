package dev.relayfarm.gen;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.ir.StructuralHash;
import dev.relayfarm.text.MismatchText;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import java.util.function.IntFunction;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The 100,000-node chains through the text format, both ways, on the default stack. */
class LargeProgramsTextTest {
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.relayfarm.gen.LargeProgramsTest#chains")
    void printThenParseRoundTrips(String name, IntFunction<IRModule> build) {
        IRModule m = build.apply(LargeProgramsTest.N);
        String text = RelayPrinter.print(m);
        IRModule parsed = RelayParser.parseModule(text, name + ".relay");
        StructuralEquality.diff(m, parsed).ifPresent(d -> {
            throw new AssertionError(MismatchText.render(d));
        });
        assertEquals(StructuralHash.hash(m), StructuralHash.hash(parsed));
        assertEquals(ExprTraversal.countNodes(m), ExprTraversal.countNodes(parsed));
        assertEquals(text, RelayPrinter.print(parsed), "printing the parsed chain gives the same text");
    }
}
