package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Diagnostics carry file:line:col, the message, the source line and a caret under the column. */
class SyntaxErrorTest {

    private static RelayParseException moduleError(String src) {
        return assertThrows(RelayParseException.class, () -> RelayParser.parseModule(src, "bad.relay"));
    }

    @Test
    void unboundVariableIsReportedAtItsUse() {
        RelayParseException e = moduleError("""
                #[version = "0.0.5"]
                def @main(%x: float32) {
                  %0 = add(%x, %y);
                  %0
                }
                """);
        assertEquals(3, e.line());
        assertEquals(16, e.column());
        assertEquals("unbound variable %y", e.reason());
        assertEquals("""
                bad.relay:3:16: unbound variable %y
                  %0 = add(%x, %y);
                               ^""", e.getMessage());
    }

    @Test
    void missingSemicolon() {
        RelayParseException e = moduleError("def @main() {\n  let %a = 1\n  %a\n}\n");
        assertEquals("bad.relay:3:3: expected ';' after the let value, found '%a'", e.getMessage().lines().findFirst().orElseThrow());
    }
}
