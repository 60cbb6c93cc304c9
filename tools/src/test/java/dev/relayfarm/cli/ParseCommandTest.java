package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.text.RelayParser;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ParseCommandTest {
    /** The repository's examples/ directory (tests run in tools/). */
    private static Path example(String name) {
        Path p = Path.of("..", "examples", name);
        return Files.exists(p) ? p : Path.of("examples", name);
    }

    @Test
    void examplesParseAndPrintNormalisedText() throws Exception {
        for (String name : new String[] {"mlp.relay", "adt_list.relay", "factorial.relay", "closures.relay", "tree_lstm.relay"}) {
            Path p = example(name);
            CliRun r = CliRun.relayc("parse", p.toString());
            assertEquals(0, r.exitCode(), name + ": " + r.err());
            assertTrue(r.out().startsWith("#[version = \"0.0.5\"]\n"), r.out());
            assertTrue(StructuralEquality.equal(RelayParser.parseModule(Files.readString(p)), RelayParser.parseModule(r.out())), name);
        }
        assertTrue(CliRun.relayc("parse", example("mlp.relay").toString()).out().contains("nn.softmax(%4, axis=-1)"));
    }

    @Test
    void syntaxErrorGoesToStderrWithExitCodeOne(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("bad.relay");
        Files.writeString(bad, "def @main(%x) {\n  add(%x, %y)\n}\n");
        CliRun r = CliRun.relayc("parse", bad.toString());
        assertEquals(1, r.exitCode());
        assertEquals("", r.out());
        assertEquals("relayc parse: " + bad + ":2:11: unbound variable %y\n  add(%x, %y)\n          ^\n", r.err());
    }

    @Test
    void missingFileIsAnError() {
        CliRun r = CliRun.relayc("parse", "no/such/file.relay");
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("no such file: no/such/file.relay"), r.err());
    }

    @Test
    void readsStandardInputAndExpressions() {
        InputStream saved = System.in;
        try {
            System.setIn(new ByteArrayInputStream("fn (%x) { %x + %x }".getBytes(StandardCharsets.UTF_8)));
            CliRun r = CliRun.relayc("parse", "--expr", "-");
            assertEquals(0, r.exitCode(), r.err());
            assertEquals("#[version = \"0.0.5\"]\nfn (%x) {\n  add(%x, %x)\n}\n", r.out());
            System.setIn(new ByteArrayInputStream("def @main() { %z }".getBytes(StandardCharsets.UTF_8)));
            CliRun e = CliRun.relayc("parse", "-");
            assertEquals(1, e.exitCode());
            assertTrue(e.err().startsWith("relayc parse: <stdin>:1:15: unbound variable %z"), e.err());
        } finally {
            System.setIn(saved);
        }
    }
}
