package dev.relayfarm.cli;

import dev.relayfarm.compile.CBackend;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.frontend.OnnxCheck;
import dev.relayfarm.passes.OptPipeline;
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

    @Option(names = "-O", paramLabel = "LEVEL", defaultValue = "0", description = "optimization level 0..3: the pass pipeline runs on the imported module before it is evaluated (default ${DEFAULT-VALUE})")
    int optLevel;

    @Option(names = "--shape", paramLabel = "NAME=DIMS", description = "bind an input's dynamic dims, e.g. x=1x3x224x224")
    List<String> shapes = List.of();

    @Option(names = "--target", defaultValue = "c -mcpu=native", description = "target of --backend c (default \"${DEFAULT-VALUE}\")")
    String target;

    @Option(names = "--threads", defaultValue = "0", description = "threads of --backend c (default 0: all online CPUs)")
    int threads;

    enum Backend { interp, c }

    @Override
    public Integer call() {
        Optional<String> badLevel = CommonOptions.optLevelError(optLevel);
        if (badLevel.isPresent()) {
            System.err.println("error: " + badLevel.get());
            return 2;
        }
        if (!Files.isRegularFile(dir.resolve("model.onnx"))) {
            System.err.println("error: " + dir + " has no model.onnx");
            return 2;
        }
        Map<String, List<Long>> bound = CommonOptions.inputShapes(shapes);
        if (backend == Backend.c && optLevel < 1) {
            System.err.println("error: --backend c runs fused kernels: use -O1 or higher (-O3 recommended)");
            return 2;
        }
        OnnxCheck.Backend run;
        try {
            run = backend == Backend.c ? new CBackend(new CompileOptions(Target.parse(target), optLevel, Map.of()), threads) : OnnxCheck.Backend.INTERPRETER;
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            return 2;
        }
        OnnxCheck.Result r = OnnxCheck.check(dir, new OnnxCheck.Options(ImportOptions.DEFAULT.withInputShapes(bound), null,
                m -> optLevel == 0 ? m : OptPipeline.optimize(m, optLevel), run));
        System.out.println(r.line());
        System.out.printf("import %d ms, run %d ms%n", r.importMillis(), r.runMillis());
        return switch (r.status()) {
            case PASS -> 0;
            case FAIL -> 1;
            case ERROR, SKIP -> 2;
        };
    }
}
