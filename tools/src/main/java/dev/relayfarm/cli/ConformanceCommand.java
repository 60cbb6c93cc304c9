package dev.relayfarm.cli;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.conformance.CBackend;
import dev.relayfarm.conformance.Conformance;
import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.Stages;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code relayc conformance DIR...}: every ONNX test folder below the directories. */
@Command(name = "conformance", mixinStandardHelpOptions = true,
        description = {"Run every ONNX test folder below the given directories in parallel, with a per-test time limit.",
                "Prints PASS / FAIL <reason> / SKIP <unsupported op X> per test, a table of failures grouped by reason,",
                "and finally 'N passed, N failed, N skipped'. Exit 0 unless --min-pass is not reached."})
public final class ConformanceCommand implements Callable<Integer> {
    @Parameters(paramLabel = "DIR", arity = "1..*", description = "directories holding test folders")
    List<Path> dirs;

    @Option(names = "--backend", defaultValue = "interp", description = "execution backend: interp (default) or c (each test compiled to an artifact and run; needs -O1..3, -O3 if not given)")
    String backend;

    @Option(names = "-O", paramLabel = "LEVEL", defaultValue = "0", description = "optimization level (" + OptLevels.PIPELINE_TEXT + ") applied to each imported model before it runs (default ${DEFAULT-VALUE})")
    int optLevel;

    @Option(names = "--threads", defaultValue = "0", description = "parallel tests (default: number of cores)")
    int threads;

    @Option(names = "--timeout", defaultValue = "60", description = "per-test time limit in seconds (default ${DEFAULT-VALUE})")
    long timeoutSeconds;

    @Option(names = "--min-pass", defaultValue = "0", description = "exit 1 when fewer tests pass")
    long minPass;

    @Option(names = "--quiet", description = "print only failures, the table and the counts")
    boolean quiet;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        if (!backend.equals("interp") && !backend.equals("c")) {
            return CliErrors.report(spec, "unknown backend '" + backend + "' (available: interp, c)");
        }
        // The C backend runs fused kernels only: it needs fusion, so its default level is 3.
        int level = backend.equals("c") && optLevel == 0 ? CompileRequest.DEFAULT_OPT_LEVEL : optLevel;
        Optional<String> badLevel = CommonOptions.optLevelError(optLevel);
        if (badLevel.isPresent()) {
            return CliErrors.report(spec, badLevel.get());
        }
        List<Path> tests;
        try {
            tests = Conformance.findTests(dirs);
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, e.getMessage());
        }
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        Conformance.Summary s = Conformance.run(tests, options(backend.equals("c"), level), n, timeoutSeconds * 1000, r -> {
            if (!quiet || r.status() != OnnxCheck.Status.PASS) spec.commandLine().getOut().println(r.line());
        });
        spec.commandLine().getOut().println();
        spec.commandLine().getOut().print(s.table());
        spec.commandLine().getOut().println();
        spec.commandLine().getOut().println(s.countsLine());
        spec.commandLine().getOut().flush();
        return s.passed() >= minPass ? 0 : 1;
    }

    /** How a test runs: imported, optimized at {@code level} (0: not at all), then interpreted or compiled to an artifact. */
    static OnnxCheck.Options options(boolean compiled, int level) {
        CompileOptions compile = CompileOptions.host(level);
        return new OnnxCheck.Options(ImportOptions.DEFAULT, null,
                m -> level == 0 ? m : Stages.optimize(m, level, compile.target()),
                compiled ? new CBackend(compile, 1) : OnnxCheck.Backend.INTERPRETER);
    }
}
