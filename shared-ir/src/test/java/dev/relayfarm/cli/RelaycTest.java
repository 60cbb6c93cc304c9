package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class RelaycTest {

    private record Run(int exitCode, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = new CommandLine(new Relayc());
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        int code = cmd.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void helpExitsZeroAndMentionsRelayc() {
        Run r = run("--help");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("relayc"), r.out());
    }

    @Test
    void versionIsPrinted() {
        Run r = run("--version");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("0.1.0"), r.out());
    }

    @Test
    void noSubcommandIsAUsageError() {
        Run r = run();
        assertNotEquals(0, r.exitCode());
        assertTrue(r.err().contains("Usage"), r.err());
    }
}
