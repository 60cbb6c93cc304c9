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
import dev.relayfarm.bench.GradientBench;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * {@code relayc grad FILE [--wrt P,...] [--simplify] [--check | --bench [--threads N] [--runs N]]}: prints the reverse-mode gradient of a global as a Relay
 * module whose {@code @main} takes the same parameters and returns {@code (f(x), (df/dp, ...))}. As printed it runs with
 * {@code relayc run}; {@code --simplify} partially evaluates the backpropagator away (a first-order model's gradient is
 * then plain dataflow that {@code relayc compile} accepts). {@code --check} instead compares the gradient with central
 * finite differences at seeded inputs and prints the relative error per parameter (exit 1 above the tolerance).
 * {@code --bench} compiles the function and its gradient at -O3 and prints their latencies and ratio ({@link GradientBench}).
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

    @Option(names = "--seed", defaultValue = "1", description = "seed of the --check and --bench inputs (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--tolerance", paramLabel = "REL", description = "largest relative error --check accepts (default 1e-5 for float64 programs, 1e-2 otherwise)")
    Double tolerance;

    @Option(names = "--bench", description = "compile the function (-O3) and its gradient to native artifacts and time them on the same seeded inputs, in turns; print median/p90 ms and the ratio gradient/forward")
    boolean bench;

    @Option(names = "--threads", defaultValue = "1", description = "--bench: threads of each artifact (default ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--runs", defaultValue = "20", description = "--bench: timed runs of each program (default ${DEFAULT-VALUE})")
    int runs;

    // The forward pass of a small model is tens of microseconds, much of it the runtime's Java side (copying inputs
    // in, outputs out) until the JIT has compiled it: too few warm-up rounds inflate the forward time and shrink the ratio.
    @Option(names = "--warmup", defaultValue = "50", description = "--bench: untimed rounds of both programs first (default ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--kernels", description = "--bench: also time each fused kernel of the gradient alone (one C compile each) and print its share; a kernel's time includes the runtime's per-call copying of its inputs and outputs, which dominates small kernels")
    boolean kernels;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        ModelSource source = ModelFiles.read(file);
        IRModule module = TypeInference.infer(Stages.importModel(source, Map.of())).module();
        List<String> params = wrt.stream().map(p -> p.startsWith("%") ? p.substring(1) : p).toList();
        if (bench) return bench(module, params, out);
        if (check) return check(module, params, out);
        IRModule grad = ReverseMode.gradient(module, global.startsWith("@") ? global.substring(1) : global, params);
        if (simplify) grad = GradientPipeline.simplify(grad);
        out.print(RelayPrinter.print(grad));
        out.flush();
        return 0;
    }

    private int bench(IRModule module, List<String> params, PrintWriter out) {
        if (check || simplify) return CliErrors.report(spec, "--bench compiles the simplified gradient itself: drop --check and --simplify");
        if (!global.equals("main")) return CliErrors.report(spec, "--bench times @main and its gradient");
        if (threads < 1 || runs < 1 || warmup < 0) return CliErrors.report(spec, "--threads and --runs must be at least 1 and --warmup at least 0");
        Path dir;
        try {
            dir = Files.createTempDirectory("relayc-grad-bench-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary folder: " + e.getMessage(), e);
        }
        // the loaded libraries stay mapped until exit, so the folder goes then
        BenchCommand.deleteOnExit(dir);
        String name = file.equals("-") ? "stdin" : Path.of(file).getFileName().toString();
        GradientBench.Result r = GradientBench.measure(name, module, params, dir, threads, warmup, runs, seed);
        r.printTable(out);
        if (kernels) {
            out.printf("%-28s %10s %7s  %s%n", "gradient kernel (alone)", "median ms", "share", "ops");
            for (GradientBench.KernelTime k : GradientBench.kernelTimes(module, params, dir.resolve("kernels"), threads, warmup, runs, seed)) {
                out.printf(java.util.Locale.ROOT, "%-28s %10.4f %6.1f%%  %s%n", k.name(), k.medianMs(), 100 * k.share(), k.ops());
            }
        }
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
