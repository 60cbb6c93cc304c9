package dev.relayfarm.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.text.RelayParser;
import org.junit.jupiter.api.Test;

/**
 * Types that grow through bindings rather than syntax, which the parser's nesting limit cannot see: a type that
 * doubles per let made inference run for minutes, one that deepens per let overflowed the stack. Both now end in
 * a located {@link TypeException} at the binding that crosses the limit, on a default thread in milliseconds.
 */
class TypeGrowthTest {
    /** {@code let %x1 = (%x0, %x0); let %x2 = (%x1, %x1); ...} — {@code n} bindings. */
    static String doubling(int n) {
        StringBuilder sb = new StringBuilder("#[version = \"0.0.5\"]\ndef @main(%x0: float32) {\n");
        for (int i = 1; i <= n; i++) sb.append("  let %x").append(i).append(" = (%x").append(i - 1).append(", %x").append(i - 1).append(");\n");
        return sb.append("  %x").append(n).append("\n}\n").toString();
    }

    /** {@code let %x1 = (%x0,); let %x2 = (%x1,); ...} and the same with {@code ref} and closures. */
    static String deepening(int n, String wrap) {
        StringBuilder sb = new StringBuilder("#[version = \"0.0.5\"]\ndef @main(%x0: float32) {\n");
        for (int i = 1; i <= n; i++) sb.append("  let %x").append(i).append(" = ").append(wrap.replace("$", "%x" + (i - 1))).append(";\n");
        return sb.append("  %x").append(n).append("\n}\n").toString();
    }

    private static String error(String source) {
        IRModule m = RelayParser.parseModule(source, "grow.relay");
        TypeException e = assertThrows(TypeException.class, () -> TypeInference.infer(m));
        return e.getMessage();
    }

    @Test
    void aTypeDoublingPerBindingStopsAtTheComponentLimit() {
        long t = System.nanoTime();
        String msg = error(doubling(40));
        // %x16 has 2^17 - 1 components, the first count over 100,000: binding 16, line 18
        assertTrue(msg.startsWith("grow.relay:18:"), msg);
        assertTrue(msg.contains("has more than 100000 components (the limit)"), msg);
        assertTrue(System.nanoTime() - t < 10_000_000_000L, "no exponential walk before the limit");
    }

    @Test
    void typesDeepeningPerBindingStopAtTheDepthLimit() {
        for (String wrap : new String[] {"($,)", "ref($)", "fn () { $ }"}) {
            String msg = error(deepening(50_000, wrap));
            assertTrue(msg.contains("nests more than 128 levels deep (the limit)"), wrap + ": " + msg);
        }
    }

    @Test
    void theTypeDepthLimitIsTheJsonIrs() {
        // a typed module goes from stage to stage as JSON: a type the checker accepts must be readable there
        assertEquals(dev.relayfarm.serde.IrJson.MAX_NESTING_DEPTH, Inferencer.MAX_TYPE_DEPTH);
    }

    @Test
    void typesUnderTheLimitsAreInferred() {
        InferResult doubled = TypeInference.infer(RelayParser.parseModule(doubling(15), "ok.relay"));
        assertTrue(doubled.typeOf(doubled.module().main().orElseThrow()).toString().startsWith("fn (float32) -> (("), "doubled 15 times");
        InferResult deep = TypeInference.infer(RelayParser.parseModule(deepening(100, "($,)"), "ok.relay"));
        assertEquals(TupleType.class, ((dev.relayfarm.ir.FuncType) deep.typeOf(deep.module().main().orElseThrow())).retType().getClass());
    }
}
