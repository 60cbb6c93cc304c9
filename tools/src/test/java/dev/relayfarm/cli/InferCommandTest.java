package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InferCommandTest {
    @TempDir
    Path dir;

    private CliRun run(String source, String... extra) throws IOException {
        Path f = dir.resolve("model.relay");
        Files.writeString(f, source);
        String[] args = new String[extra.length + 2];
        args[0] = "infer";
        args[1] = f.toString();
        System.arraycopy(extra, 0, args, 2, extra.length);
        return CliRun.relayc(args);
    }

    private static final String PROGRAM = """
            #[version = "0.0.5"]
            def @main(%w: Tensor[(10, 4), float32], %x: Tensor[(5, 10, 1), float32]) {
              %0 = add(%x, %x);
              multiply(%0, %w)
            }
            """;

    @Test
    void typeOfPrintsTheGlobalsFunctionType() throws IOException {
        CliRun r = run(PROGRAM, "--type-of", "@main");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals("fn (Tensor[(10, 4), float32], Tensor[(5, 10, 1), float32]) -> Tensor[(5, 10, 4), float32]", r.out().strip());
    }

    @Test
    void printsTheModuleWithFullSignaturesAndTypes() throws IOException {
        CliRun r = run("""
                #[version = "0.0.5"]
                def @main(%x: Tensor[(3), float32], %y) {
                  let %z = if (True) { %y } else { %x };
                  add(%z, %x)
                }
                """);
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("def @main(%x: Tensor[(3), float32], %y: Tensor[(3), float32]) -> Tensor[(3), float32]"),
                r.out());
        assertTrue(r.out().contains("ty=Tensor[(3), float32]"), r.out());
    }

    @Test
    void illTypedInputPrintsDiagnosticsAndExitsOne() throws IOException {
        CliRun r = run("""
                #[version = "0.0.5"]
                def @main(%x: Tensor[(3), float32]) {
                  if (%x) { 1f } else { 2f }
                }
                """);
        assertEquals(1, r.exitCode());
        assertTrue(r.err().contains("model.relay:3:3:"), r.err());
        assertTrue(r.err().contains("if condition must be a bool scalar (Tensor[(), bool]), got Tensor[(3), float32]"), r.err());
        assertEquals("", r.out());
    }
}
