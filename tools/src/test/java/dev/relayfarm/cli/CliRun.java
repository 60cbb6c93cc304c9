package dev.relayfarm.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** One in-process {@code relayc} invocation with its exit code and captured stdout/stderr, for CLI tests. */
record CliRun(int exitCode, String out, String err) {
    static CliRun relayc(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = Relayc.commandLine();
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        return new CliRun(cmd.execute(args), out.toString(), err.toString());
    }
}
