package dev.relayfarm.cli;

import dev.relayfarm.ad.GradientCheck;
import dev.relayfarm.ad.GradientPipeline;
import dev.relayfarm.ad.ReverseMode;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.text.RelayPrinter;
import dev.relayfarm.types.TypeInference;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc grad FILE [--wrt P,...] [--simplify] [--check]}: prints the reverse-mode gradient of a global as a Relay
 * module whose {@code @main} takes the same parameters and returns {@code (f(x), (df/dp, ...))}. As printed it runs with
 * {@code relayc run}; {@code --simplify} partially evaluates the backpropagator away (a first-order model's gradient is
 * then plain dataflow that {@code relayc compile} accepts). {@code --check} instead compares the gradient with central
 * finite differences at seeded inputs and prints the relative error per parameter (exit 1 above the tolerance).
 */
@Command(name = "grad", mixinStandardHelpOptions = true,
        description = {"Print the gradient program of a Relay function (reverse mode): @main(params) -> (f(params), (df/dp, ...)).",
                "With --simplify, partially evaluated into dataflow (compilable with 'relayc compile' when f is first-order)."})
public final class GradCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "Relay text file, or - for standard input.")
    String file;

    @Option(names = "--global", defaultValue = "main", paramLabel = "NAME", description = "the function to differentiate (default ${DEFAULT-VALUE})")
    String global;

    @Option(names = "--wrt", split = ",", paramLabel = "PARAM", description = "differentiate with respect to these parameters only (default: all)")
    List<String> wrt = new ArrayList<>();

    @Option(names = "--simplify", description = "partial evaluation + dead code elimination: the backpropagator closures and adjoint cells run at compile time")
    boolean simplify;

    @Option(names = "--check", description = "compare with central finite differences at seeded uniform inputs instead of printing the program")
    boolean check;

    @Option(names = "--seed", defaultValue = "1", description = "seed of the --check inputs (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--tolerance", paramLabel = "REL", description = "largest relative error --check accepts (default 1e-5 for float64 programs, 1e-2 otherwise)")
    Double tolerance;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        ModelSource source = ModelFiles.read(file);
        IRModule module = TypeInference.infer(Stages.importModel(source, Map.of())).module();
        List<String> params = wrt.stream().map(p -> p.startsWith("%") ? p.substring(1) : p).toList();
        if (check) return check(module, params, out);
        IRModule grad = ReverseMode.gradient(module, global.startsWith("@") ? global.substring(1) : global, params);
        if (simplify) grad = GradientPipeline.simplify(grad);
        out.print(RelayPrinter.print(grad));
        out.flush();
        return 0;
    }

    private int check(IRModule module, List<String> params, PrintWriter out) {
        if (!global.equals("main") || !params.isEmpty()) return CliErrors.report(spec, "--check differentiates @main with respect to all its parameters");
        Function main = module.main().orElseThrow(() -> new dev.relayfarm.ad.GradientException("gradient check: the module has no @main"));
        List<NDArray> inputs = new ArrayList<>();
        boolean allDouble = true;
        long s = seed;
        for (Var p : main.params()) {
            if (!(p.annotation() instanceof TensorType t)) return CliErrors.report(spec, "--check needs tensor parameters; %" + p.name() + " is " + p.annotation());
            allDouble &= t.dtype().equals(dev.relayfarm.ir.DType.FLOAT64);
            inputs.add(GradientCheck.uniform(t, -1, 1, s++));
        }
        double limit = tolerance != null ? tolerance : allDouble ? 1e-5 : 1e-2;
        double h = allDouble ? 1e-6 : 1e-2;
        GradientCheck.Report report = GradientCheck.check(module, inputs, h, seed);
        out.print(report);
        out.printf("worst relative error %.3g (tolerance %.3g, step %.0e)%n", report.worstRelativeError(), limit, h);
        out.flush();
        return report.worstRelativeError() <= limit ? 0 : 1;
    }
}
