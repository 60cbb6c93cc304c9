package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/** Test helpers: parse → print → parse must be structurally equal, and printing must be a fixed point. */
final class RoundTrip {
    private RoundTrip() {}

    static String resource(String name) {
        try (InputStream in = RoundTrip.class.getResourceAsStream("/relay/" + name)) {
            if (in == null) throw new IllegalArgumentException("no test resource relay/" + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Parses {@code source}, checks the round trip and the printing fixed point, and returns the parsed module. */
    static IRModule module(String source, String file) {
        return module(source, file, true);
    }

    static IRModule module(String source, String file, boolean checkFixedPoint) {
        IRModule m = RelayParser.parseModule(source, file);
        String printed = RelayPrinter.print(m);
        IRModule again;
        try {
            again = RelayParser.parseModule(printed, file + "(printed)");
        } catch (RelayParseException e) {
            throw new AssertionError("printed text does not parse:\n" + e.getMessage() + "\n--- printed ---\n" + printed, e);
        }
        Optional<StructuralEquality.Mismatch> d = StructuralEquality.diff(m, again);
        if (d.isPresent()) fail("round trip differs: " + MismatchText.render(d.get()) + "\n--- printed ---\n" + printed);
        if (checkFixedPoint) assertEquals(printed, RelayPrinter.print(again), "printing is not a fixed point");
        return m;
    }

    static Expr expr(String source) {
        Expr e = RelayParser.parseExpr(source, "test");
        String printed = RelayPrinter.print(e);
        Expr again;
        try {
            again = RelayParser.parseExpr(printed, "printed");
        } catch (RelayParseException ex) {
            throw new AssertionError("printed text does not parse:\n" + ex.getMessage() + "\n--- printed ---\n" + printed, ex);
        }
        Optional<StructuralEquality.Mismatch> d = StructuralEquality.diff(e, again);
        if (d.isPresent()) fail("round trip differs: " + MismatchText.render(d.get()) + "\n--- printed ---\n" + printed);
        assertEquals(printed, RelayPrinter.print(again), "printing is not a fixed point");
        return e;
    }
}
