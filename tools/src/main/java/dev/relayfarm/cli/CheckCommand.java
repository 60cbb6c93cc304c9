package dev.relayfarm.cli;

import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.conformance.CBackend;
import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.Stages;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code relayc check DIR}: one ONNX test folder through import, type-check, run and compare. */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = {"Run one ONNX test folder (model.onnx + test_data_set_*/input_N.pb, output_N.pb): import, type-check,",
                "evaluate and compare every output (rtol 1e-3, atol 1e-7 unless the folder's manifest.json says otherwise).",
                "Exit 0 on match, 1 on mismatch, 2 on an import/type/run error or an unsupported operator."})
public final class CheckCommand implements Callable<Integer> {
    @Parameters(paramLabel = "DIR", description = "the test folder")
    Path dir;

    @Option(names = "--backend", defaultValue = "interp", description = "execution backend: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE})")
    Backend backend;

    @Option(names = "-O", paramLabel = "LEVEL",
            description = "optimization level 0..3: the pass pipeline runs on the imported module before it is evaluated (default 0; 3 with --backend c, as relayc compile)")
    Integer optLevelOption;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--shape", paramLabel = "NAME=DIMS", description = "bind an input's dynamic dims, e.g. x=1x3x224x224")
    List<String> shapes = List.of();

    @Option(names = "--target", defaultValue = CompileRequest.DEFAULT_TARGET, description = "target of --backend c (default \"${DEFAULT-VALUE}\")")
    String target;

    @Option(names = "--threads", defaultValue = "0", description = "threads of --backend c (default 0: all online CPUs)")
    int threads;

    enum Backend { interp, c }

    @Override
    public Integer call() {
        // The C backend runs fused kernels, so it defaults to the level relayc compile uses.
        int optLevel = optLevelOption != null ? optLevelOption : backend == Backend.c ? CompileRequest.DEFAULT_OPT_LEVEL : 0;
        Optional<String> badLevel = CommonOptions.optLevelError(optLevel);
        if (badLevel.isPresent()) return CliErrors.report(spec, badLevel.get());
        if (!Files.isRegularFile(dir.resolve("model.onnx"))) return CliErrors.report(spec, dir + " has no model.onnx");
        Map<String, List<Long>> bound;
        try {
            bound = InputShapes.of(shapes);
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, e.getMessage());
        }
        if (backend == Backend.c && !CompileRequest.OPT_LEVELS.contains(optLevel)) return CliErrors.report(spec, "--backend c runs fused kernels: use -O1 or higher (-O3 recommended)");
        Target t;
        try {
            t = Target.parse(target);
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, e.getMessage());
        }
        OnnxCheck.Backend run = backend == Backend.c ? new CBackend(new CompileOptions(t, optLevel, Map.of()), threads) : OnnxCheck.Backend.INTERPRETER;
        // the module is optimized for the target it is compiled for (layout blocking), as relayc compile does
        OnnxCheck.Result r = OnnxCheck.check(dir, new OnnxCheck.Options(ImportOptions.DEFAULT.withInputShapes(bound), null,
                m -> optLevel == 0 ? m : Stages.optimize(m, optLevel, t), run));
        var out = spec.commandLine().getOut();
        out.println(r.line());
        out.printf("import %d ms, run %d ms%n", r.importMillis(), r.runMillis());
        out.flush();
        return switch (r.status()) {
            case PASS -> 0;
            case FAIL -> 1;
            case ERROR, SKIP -> 2;
        };
    }
}
