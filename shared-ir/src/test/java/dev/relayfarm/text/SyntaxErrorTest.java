package dev.relayfarm.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Diagnostics carry file:line:col, the message, the source line and a caret under the column. */
class SyntaxErrorTest {

    private static RelayParseException moduleError(String src) {
        return assertThrows(RelayParseException.class, () -> RelayParser.parseModule(src, "bad.relay"));
    }

    private static String firstLine(RelayParseException e) {
        return e.getMessage().lines().findFirst().orElseThrow();
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
        assertEquals("bad.relay", e.file());
        assertEquals(3, e.line());
        assertEquals(16, e.column());
        assertEquals("unbound variable %y", e.reason());
        assertEquals("  %0 = add(%x, %y);", e.sourceLine());
        assertEquals("""
                bad.relay:3:16: unbound variable %y
                  %0 = add(%x, %y);
                               ^""", e.getMessage());
        assertEquals(e.getMessage(), e.render());
    }

    @Test
    void caretFollowsTabs() {
        RelayParseException e = moduleError("def @main() {\n\t\t%q\n}\n");
        assertEquals("bad.relay:2:3: unbound variable %q\n\t\t%q\n\t\t^", e.getMessage());
    }

    @Test
    void dimensionsThatSimplifyToANegativeOrUndefinedValue() {
        // found by the Relay text fuzz campaign: (10, 1-128) type-checked and failed only after fuse-ops simplified it
        assertEquals("bad.relay:1:27: a dimension must not be negative, this one is -127",
                firstLine(moduleError("def @main(%w: Tensor[(10, 1-128), float32]) { %w }\n")));
        assertEquals("bad.relay:1:23: a dimension must not be negative, this one is -1", firstLine(moduleError("def @main(%w: Tensor[(-1), float32]) { %w }\n")));
        assertTrue(firstLine(moduleError("def @main(%w: Tensor[(10/0), float32]) { %w }\n")).startsWith("bad.relay:1:23: the dimension cannot be computed: "));
        // symbolic dimensions stay as written
        RelayParser.parseModule("def @main(%w: Tensor[(n - 1, 2 * n), float32]) { %w }\n", "ok.relay");
    }

    @Test
    void missingSemicolon() {
        RelayParseException e = moduleError("def @main() {\n  let %a = 1\n  %a\n}\n");
        assertEquals("bad.relay:3:3: expected ';' after the let value, found '%a'", firstLine(e));
    }

    @Test
    void letVariableIsNotInScopeInItsOwnNonFunctionValue() {
        RelayParseException e = moduleError("def @main() {\n  let %a = %a + 1;\n  %a\n}\n");
        assertEquals("bad.relay:2:12: unbound variable %a", firstLine(e));
    }

    @Test
    void variablesDoNotLeakOutOfTheirScope() {
        RelayParseException e = moduleError("def @main(%x) {\n  (fn (%y) { %y }, %y)\n}\n");
        assertEquals("bad.relay:2:20: unbound variable %y", firstLine(e));
        RelayParseException m = moduleError("type T { A(int32) }\ndef @main(%t: T) {\n  (match (%t) { A(%v) => %v }, %v)\n}\n");
        assertEquals("bad.relay:3:32: unbound variable %v", firstLine(m));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "def @main() { @nowhere(1) }|1:15|unknown global @nowhere",
        "def @main() { Cons(1) }|1:15|unknown constructor Cons",
        "def @main(%x: Lisst[int32]) { %x }|1:15|unknown type Lisst",
        "def @main(%x: Tensor[(2), float33]) { %x }|1:27|unknown dtype 'float33'",
        "def @main() { 300i8 }|1:15|literal 300i8 is out of range for int8 [-128, 127]",
        "def @main() { 1.5i32 }|1:15|integer literal '1.5i32' has a fraction or exponent",
        "def @main() { 1x }|1:15|malformed number '1x' (dtype suffixes are f, f16, f64, i8, i16, i64, u8, ...)",
        "def @main() { 1f7 }|1:15|unknown dtype suffix 'f7' on '1f7'",
        "def @main() { if (True) { 1 } }|1:31|expected 'else' (an if needs both branches), found '}'",
        "def @main() { add(1, 2 }|1:24|expected ',' or ')' in the argument list, found '}'",
        "def @main() { (1, 2 }|1:21|expected ',' or ')' in the tuple, found '}'",
        "def @main() { \"str\" }|1:15|expected an expression, found string \"str\"",
        "def @main() { 1 } def @main() { 2 }|1:23|duplicate definition of @main",
        "%x = 1;|1:1|expected 'def' or 'type' at the top level of a module, found '%x'",
        "def @main() { meta[relay.Constant][0] }|1:15|meta[relay.Constant][0] used but the text has no #[metadata] section",
        "def @main() { 1 } /* unterminated|1:19|unterminated block comment",
        "def @main() { \"abc }|1:15|unterminated string literal",
        "def @main() { 1 ! 2 }|1:17|unexpected character '!'",
        "#[version = \"0.0.4\"] def @main() { 1 }|1:13|unsupported Relay text version \"0.0.4\" (expected \"0.0.5\")",
        "type T { A(int32) } def @main(%t: T) { match (%t) { A => 1 } }|1:53|constructor A has 1 field(s), the pattern gives 0",
        "type T { A, A }|1:13|duplicate constructor A in type T",
        "type T { A } def @main(%t: T) { match (%t, %t { _ => 1 } }|1:47|expected ',' or ')' after the matched value, found '{'",
        "def @main() { f(x=1, 2) }|1:22|positional argument after keyword attributes",
        "def @main() { f(x=1, x=2) }|1:22|duplicate attribute 'x'",
        "def @main() { let %x = 1; }|1:27|expected an expression, found '}'",
    })
    void errors(String source, String position, String message) {
        RelayParseException e = moduleError(source);
        assertEquals("bad.relay:" + position + ": " + message, firstLine(e));
        String caretLine = e.getMessage().lines().reduce((a, b) -> b).orElseThrow();
        assertEquals(e.column() - 1, caretLine.indexOf('^'), e.getMessage());
    }

    @Test
    void metadataErrorsPointAtTheSection() {
        RelayParseException e = moduleError("def @main() {\n  meta[relay.Constant][1]\n}\n#[metadata]\n{\"relay.Constant\": [{\"dtype\": \"int32\", \"shape\": [1], \"data\": \"AQAAAA==\"}]}\n");
        assertEquals("bad.relay:2:24: meta[relay.Constant][1] is out of range: the metadata section has 1 constant(s)", firstLine(e));
        RelayParseException bad = moduleError("def @main() { 1 }\n#[metadata]\n{\"relay.Constant\": [{\"dtype\": \"int32\", \"shape\": [2], \"data\": \"AQAAAA==\"}]}\n");
        assertEquals("bad.relay:2:1: metadata relay.Constant[0]: shape [2] of int32 needs 8 bytes, got 4", firstLine(bad));
        RelayParseException json = moduleError("def @main() { 1 }\n#[metadata]\n{\"relay.Constant\": [}\n");
        assertEquals(2, json.line());
    }

    @Test
    void parseExprChecksGlobalsOnlyAgainstAGivenModule() {
        RelayParser.parseExpr("@anything(1)");
        var module = RelayParser.parseModule("def @f(%x) { %x }");
        RelayParser.parseExpr("@f(1)", "e", module, null);
        RelayParseException e = assertThrows(RelayParseException.class, () -> RelayParser.parseExpr("@g(1)", "e", module, null));
        assertEquals("e:1:1: unknown global @g", firstLine(e));
    }
}
