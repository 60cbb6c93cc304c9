package dev.relayfarm.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.WellFormed;
import dev.relayfarm.text.RelayParser;
import org.junit.jupiter.api.Test;

/**
 * Inputs found by the fuzz campaigns ({@code dev.relayfarm.fuzz}) that made type inference throw
 * something other than a user error, reduced by hand. Each is well-formed and must end in a
 * {@link TypeException} (or type-check).
 */
class FuzzRegressionTest {

    private static IRModule text(String source) {
        IRModule m = RelayParser.parseModule(source, "fuzz.relay");
        assertEquals(java.util.List.of(), WellFormed.problems(m));
        return m;
    }

    private static String error(IRModule m) {
        TypeException e = assertThrows(TypeException.class, () -> TypeInference.infer(m));
        return e.getMessage();
    }

    // ---------------------------------------------------------------- cyclic types

    @Test
    void recursiveCallThroughRefReadIsAnInfiniteType() {
        // %hd : ?h := ref(?v), then @loop(%2) unifies ?h with ?v. The solver united the two holes
        // before its occurs check, so the failing check left ?v -> ?h := ref(?v) behind and
        // resolving it (for this very message) overflowed the stack.
        String d = error(text("""
                #[version = "0.0.5"]
                def @loop(%hd) {
                  %0 = ref_read(%hd);
                  @loop(%0)
                }
                """));
        assertTrue(d.startsWith("fuzz.relay:3:8: argument 1 of @loop: expected ref(_), got _ (infinite type: "), d);
    }

    @Test
    void infiniteTypeFromTheFuzzerWithOtherArguments() {
        String d = error(text("""
                #[version = "0.0.5"]
                def @loop(%hd, %weight) -> Tensor[(h, batch, 38), int8] {
                  %0 = ref_read(%hd);
                  %1 = multiply(%weight, %weight);
                  @loop(%0, %1)
                }
                """));
        assertTrue(d.contains("fuzz.relay:3:8:") && d.contains("infinite type: a type would contain itself: ref(_)"), d);
    }
}
