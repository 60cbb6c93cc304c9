package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.text.RelayParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OptCommandTest {
    private static final String PROGRAM = """
            #[version = "0.0.5"]
            def @unused(%a: Tensor[(2), float32]) { negative(%a) }
            def @main(%y: Tensor[(2), float32]) -> Tensor[(2), float32] { exp(%y) }
            """;

    private static Path write(Path dir, String text) throws IOException {
        Path file = dir.resolve("prog.relay");
        Files.writeString(file, text);
        return file;
    }

    @Test
    void namedPassesRunAndTheResultIsRelayText(@TempDir Path dir) throws IOException {
        Path file = write(dir, PROGRAM);
        CliRun r = CliRun.relayc("opt", file.toString(), "--passes", "remove-unused-functions", "--timing",
                "--dump-after", "remove-unused-functions", "--validate");
        assertEquals(0, r.exitCode(), r.err());
        assertFalse(r.out().contains("@unused"), r.out());
        assertTrue(StructuralEquality.equal(RelayParser.parseModule(r.out()), RelayParser.parseModule("""
                #[version = "0.0.5"]
                def @main(%y: Tensor[(2), float32]) -> Tensor[(2), float32] { exp(%y) }
                """)), r.out());
        assertTrue(r.err().contains("// after remove-unused-functions"), r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith("remove-unused-functions") && l.trim().endsWith("yes")), r.err());
    }

    @Test
    void levelZeroChangesNothingAndListNamesThePasses(@TempDir Path dir) throws IOException {
        Path file = write(dir, PROGRAM);
        CliRun r = CliRun.relayc("opt", file.toString(), "-O0");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(StructuralEquality.equal(RelayParser.parseModule(r.out()), RelayParser.parseModule(PROGRAM)), r.out());
        CliRun list = CliRun.relayc("opt", "--list");
        assertEquals(0, list.exitCode(), list.err());
        assertTrue(list.out().contains("remove-unused-functions"), list.out());
    }

    @Test
    void badInputIsNamed(@TempDir Path dir) throws IOException {
        Path file = write(dir, PROGRAM);
        CliRun unknown = CliRun.relayc("opt", file.toString(), "--passes", "no-such-pass");
        assertEquals(1, unknown.exitCode());
        assertTrue(unknown.err().contains("unknown pass 'no-such-pass'") && unknown.err().contains("remove-unused-functions"), unknown.err());
        Path bad = write(dir, "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32]) {\n  add(%x, 1i)\n}\n");
        CliRun ill = CliRun.relayc("opt", bad.toString());
        assertEquals(1, ill.exitCode());
        assertTrue(ill.err().contains("prog.relay:3:"), ill.err());
        CliRun missing = CliRun.relayc("opt", dir.resolve("nope.relay").toString());
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("no such file"), missing.err());
    }
}
