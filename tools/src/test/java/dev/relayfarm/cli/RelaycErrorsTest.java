package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * Issue #13: every command reports user errors one way ({@code relayc <cmd>: message}, no stack
 * trace, exit 1), and whatever else escapes is one internal-error line with its own exit code.
 */
class RelaycErrorsTest {
    /** A valid start, then bytes that are not UTF-8 (0xC3 must be followed by a continuation byte). */
    static Path garbage(Path dir) throws IOException {
        Path f = dir.resolve("garbage.relay");
        Files.write(f, new byte[] {'d', 'e', 'f', ' ', (byte) 0xC3, 0x28, 0, (byte) 0xFF, (byte) 0xFE});
        return f;
    }

    @ParameterizedTest
    @ValueSource(strings = {"parse", "infer", "opt", "run", "json"})
    void binaryGarbageIsNotUtf8TextAtItsFirstBadByte(String command, @TempDir Path dir) throws IOException {
        Path f = garbage(dir);
        CliRun r = CliRun.relayc(command, f.toString());
        assertEquals(1, r.exitCode(), r.err());
        assertEquals("relayc " + command + ": " + f + ": not UTF-8 text at byte 4\n", r.err());
        assertEquals("", r.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"parse", "infer", "opt", "run", "json"})
    void syntaxErrorsLookTheSameInEveryCommand(String command, @TempDir Path dir) throws IOException {
        Path f = dir.resolve("bad.relay");
        Files.writeString(f, "def @main(%x: float32) {\n  add(%x, %y)\n}\n");
        CliRun r = CliRun.relayc(command, f.toString());
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().startsWith("relayc " + command + ": " + f + ":2:11: unbound variable %y\n"), r.err());
        assertFalse(r.err().contains("Exception"), r.err());
    }

    @Test
    void compileRefusesWhatTheFarmRefusesAsTheUsersError(@TempDir Path dir) throws IOException {
        // the pipeline's user errors (here the executability check after typing) are relayc's too, not "internal error"
        Path f = dir.resolve("empty.relay");
        Files.writeString(f, "#[version = \"0.0.5\"]\n");
        CliRun r = CliRun.relayc("compile", f.toString(), "-o", dir.resolve("out").toString());
        assertEquals(2, r.exitCode(), r.err());
        assertTrue(r.err().startsWith("relayc compile: the module has no @main"), r.err());
        assertFalse(r.err().contains("internal error"), r.err());
    }

    @ParameterizedTest
    @ValueSource(strings = {"parse", "infer", "opt", "run", "json"})
    void tooDeepNestingIsAUserErrorInEveryCommand(String command, @TempDir Path dir) throws IOException {
        Path f = dir.resolve("deep.relay");
        Files.writeString(f, "def @main(%x: float32) {\n  " + "(".repeat(100_000) + "%x" + ")".repeat(100_000) + "\n}\n");
        CliRun r = CliRun.relayc(command, f.toString());
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().startsWith("relayc " + command + ": " + f + ":2:"), r.err());
        assertTrue(r.err().contains("nesting deeper than 128 levels"), r.err());
    }

    @Test
    void typeErrorsAndMissingFilesShareThePrefix(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("ill.relay");
        Files.writeString(f, "def @main(%x: Tensor[(3), float32]) {\n  if (%x) { %x } else { %x }\n}\n");
        for (String command : new String[] {"infer", "run", "opt"}) {
            CliRun r = CliRun.relayc(command, f.toString());
            assertEquals(1, r.exitCode(), r.err());
            assertTrue(r.err().startsWith("relayc " + command + ": "), r.err());
            assertTrue(r.err().contains("ill.relay:2:3:"), r.err());
        }
        for (String command : new String[] {"parse", "infer", "opt", "run", "json"}) {
            CliRun r = CliRun.relayc(command, dir.resolve("nope.relay").toString());
            assertEquals(1, r.exitCode(), command + ": " + r.err());
            assertTrue(r.err().startsWith("relayc " + command + ": "), r.err());
            assertTrue(r.err().contains("no such file"), r.err());
        }
    }

    @Test
    void runBudgetsComeFromTheCommandLine(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("loop.relay");
        Files.writeString(f, """
                def @loop(%n: int32) -> int32 { @loop(%n + 1) }
                def @main(%n: int32) -> int32 { @loop(%n) }
                """);
        CliRun steps = CliRun.relayc("run", f.toString(), "--random", "--max-steps", "100000");
        assertEquals(1, steps.exitCode(), steps.err());
        assertTrue(steps.err().startsWith("relayc run: "), steps.err());
        assertTrue(steps.err().contains("step budget of 100000 steps used up in @loop"), steps.err());
        CliRun time = CliRun.relayc("run", f.toString(), "--random", "--max-steps", "" + Long.MAX_VALUE, "--timeout", "300ms");
        assertEquals(1, time.exitCode(), time.err());
        assertTrue(time.err().contains("time budget of 300 ms used up"), time.err());
        CliRun bad = CliRun.relayc("run", f.toString(), "--random", "--timeout", "soon");
        assertEquals(1, bad.exitCode(), bad.err());
        assertEquals("relayc run: --timeout expects a duration like 30s, 2m or 500ms, got 'soon'\n", bad.err());
        CliRun help = CliRun.relayc("run", "--help");
        for (String option : new String[] {"--max-steps", "--timeout", "--max-stack", "--max-tensor", "--verbose"}) {
            assertTrue(help.out().contains(option), help.out());
        }
        assertEquals(512L << 20, RunCommand.size("--max-tensor", "512m"));
        assertEquals(java.time.Duration.ofMinutes(2), RunCommand.duration("--timeout", "2m"));
    }

    /** A StackOverflowError or a bug escaping a command: one line, exit 70, the trace only with --verbose. */
    @Test
    void internalErrorsAreOneLineWithTheirOwnExitCode() {
        for (boolean verbose : new boolean[] {false, true}) {
            StringWriter err = new StringWriter();
            CommandLine cmd = Relayc.commandLine();
            cmd.setErr(new PrintWriter(err, true));
            CommandLine.ParseResult parsed = cmd.parseArgs(verbose ? new String[] {"parse", "x.relay", "--verbose"} : new String[] {"parse", "x.relay"});
            int code = CliErrors.handle(new StackOverflowError(), cmd.getSubcommands().get("parse"), parsed);
            assertEquals(CliErrors.INTERNAL_ERROR, code);
            String first = err.toString().lines().findFirst().orElseThrow();
            assertTrue(first.startsWith("relayc parse: internal error: StackOverflowError — "), first);
            assertEquals(verbose, err.toString().contains("\tat "), err.toString());
        }
    }

    /** check --backend c compiles fused kernels: without -O it takes compile's -O3 instead of refusing. */
    @Test
    void checkWithTheCBackendDefaultsToO3(@TempDir Path dir) throws IOException {
        Files.write(dir.resolve("model.onnx"), new byte[0]);
        CliRun r = CliRun.relayc("check", dir.toString(), "--backend", "c", "--target", "no-such-target");
        assertEquals(2, r.exitCode(), r.err());
        assertFalse(r.err().contains("-O1 or higher"), r.err());
        assertTrue(r.err().startsWith("relayc check: "), r.err());
        CliRun o0 = CliRun.relayc("check", dir.toString(), "--backend", "c", "-O", "0");
        assertTrue(o0.err().contains("use -O1 or higher"), o0.err());
    }
}
