package dev.relayfarm.cli;

import dev.relayfarm.conformance.Conformance;
import dev.relayfarm.conformance.OperatorTable;
import dev.relayfarm.frontend.OnnxConverters;
import dev.relayfarm.pipeline.CompileRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code relayc ops NODE_DIR [--update README.md]}: the generated table of ONNX operators. */
@Command(name = "ops", mixinStandardHelpOptions = true,
        description = {"Run the ONNX node tests below NODE_DIR through the interpreter and through compiled artifacts (-O3)",
                "and print the table of every ONNX operator the importer converts: the tests using it, how many pass on",
                "each backend, the opsets of the passing ones. With --update FILE, replace the table in FILE (between its",
                "operator-table markers) instead; the README's table is made this way."})
public final class OpsCommand implements Callable<Integer> {
    @Parameters(paramLabel = "NODE_DIR", description = "directory holding the node test folders (e.g. ../shared/onnx/node)")
    Path dir;

    @Option(names = "--update", paramLabel = "FILE", description = "markdown file whose operator-table section is replaced")
    Path update;

    @Option(names = "--threads", defaultValue = "0", description = "parallel tests (default: number of cores)")
    int threads;

    @Option(names = "--timeout", defaultValue = "60", description = "per-test time limit in seconds (default ${DEFAULT-VALUE})")
    long timeoutSeconds;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        List<Path> tests;
        try {
            tests = Conformance.findTests(List.of(dir));
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, e.getMessage());
        }
        String doc = null;
        if (update != null) {
            doc = CliErrors.readText(update);
            if (!doc.contains(OperatorTable.BEGIN)) {
                return CliErrors.report(spec, update + ": no operator table section (a line '" + OperatorTable.BEGIN + "' and one '" + OperatorTable.END + "')");
            }
        }
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        var err = spec.commandLine().getErr();
        Conformance.Summary interp = Conformance.run(tests, ConformanceCommand.options(false, 0), n, timeoutSeconds * 1000, r -> {});
        err.println("interpreter: " + interp.countsLine());
        Conformance.Summary compiled = Conformance.run(tests, ConformanceCommand.options(true, CompileRequest.DEFAULT_OPT_LEVEL), n, timeoutSeconds * 1000, r -> {});
        err.println("compiled: " + compiled.countsLine());
        String table = OperatorTable.markdown(OperatorTable.build(tests, interp, compiled, OnnxConverters.supported()),
                String.format("The node suite (%,d tests) passes %,d through the interpreter and %,d through compiled artifacts (-O3)",
                        tests.size(), interp.passed(), compiled.passed()));
        if (update == null) {
            spec.commandLine().getOut().print(table);
        } else {
            Files.writeString(update, OperatorTable.replaceSection(doc, table));
            err.println("updated the operator table in " + update);
        }
        spec.commandLine().getOut().flush();
        return 0;
    }
}
