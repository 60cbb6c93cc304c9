package dev.relayfarm.cli;

import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc parse FILE}: parses Relay text and prints it back normalised (graph bindings, unique
 * names, metadata section). Exit 0 on success; on a syntax error the diagnostic
 * ({@code relayc parse: file:line:col: message} with a caret line) goes to stderr and the exit code is 1.
 */
@Command(name = "parse", mixinStandardHelpOptions = true,
        description = "Parse a Relay text file (TVM 0.0.5 dialect) and print it normalised.")
public final class ParseCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "Relay text file, or - for standard input.")
    String file;

    @Option(names = {"-e", "--expr"}, description = "Parse a single expression instead of a module.")
    boolean expr;

    @Override
    public Integer call() {
        // Errors (no such file, not UTF-8, syntax) are reported by CliErrors: relayc parse: ...
        String source = CliErrors.readText(file);
        String name = file.equals("-") ? "<stdin>" : file;
        String out = expr
                ? RelayPrinter.print(RelayParser.parseExpr(source, name))
                : RelayPrinter.print(RelayParser.parseModule(source, name));
        spec.commandLine().getOut().print(out);
        spec.commandLine().getOut().flush();
        return 0;
    }
}
