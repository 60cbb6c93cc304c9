package dev.relayfarm.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * {@code relayc}: the RelayFarm command-line compiler driver.
 *
 * <p>Top-level command only; the real work lives in subcommands registered below.
 */
@Command(
        name = "relayc",
        mixinStandardHelpOptions = true,
        version = "0.1.0",
        description = "RelayFarm compiler driver: parse, type-check and serialize Relay IR.",
        subcommands = {
            HelpCommand.class,
            CheckCommand.class,
            CompileCommand.class,
            RecordsCommand.class,
            TuneCommand.class,
            OptCommand.class,
            BenchCommand.class,
            ProfileCommand.class,
            ConformanceCommand.class,
            OpsCommand.class,
            ParseCommand.class,
            InferCommand.class,
            JsonCommand.class,
            RunCommand.class,
            GradCommand.class,
            TrainCommand.class,
            ImportCommand.class,
            QuantizeCommand.class,
            VtaCommand.class,
        })
public final class Relayc implements Runnable {

    @Spec
    CommandSpec spec;

    /** Accepted by every command (inherited): stack traces of internal errors, see {@link CliErrors}. */
    @CommandLine.Option(names = "--verbose", scope = CommandLine.ScopeType.INHERIT,
            description = "On an internal error, print its stack trace too.")
    boolean verbose;

    /** Invoked with no subcommand: print usage and fail, so scripts notice the missing subcommand. */
    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing required subcommand");
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /**
     * The command line with RelayFarm's error handling: user errors as one line
     * {@code relayc <cmd>: message}, internal errors (StackOverflowError included) as one line with
     * exit code {@value CliErrors#INTERNAL_ERROR}; see {@link CliErrors}.
     */
    public static CommandLine commandLine() {
        CommandLine cmd = new CommandLine(new Relayc());
        cmd.setExecutionStrategy(CliErrors::execute);
        return cmd;
    }
}
