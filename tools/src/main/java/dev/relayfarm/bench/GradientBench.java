package dev.relayfarm.bench;

import dev.relayfarm.ad.GradientCheck;
import dev.relayfarm.ad.GradientPipeline;
import dev.relayfarm.ad.ReverseMode;
import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.compile.GraphBuilder;
import dev.relayfarm.compile.GraphPlan;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Var;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.types.TypeInference;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The cost of a reverse-mode gradient against its forward pass, both compiled at -O3 to native artifacts the way
 * training compiles them ({@code Training.compile}): the forward program is the module as written, the gradient
 * program is {@link ReverseMode#gradient} partially evaluated ({@link GradientPipeline#simplify}). Both run on the
 * same seeded inputs, in turns ({@link SideBySide#alternate}), so background load hits them alike; the ratio of the
 * medians is what the classic reverse-mode bound (gradient at most a small constant times the function) is about.
 */
public final class GradientBench {
    /** Median and p90 milliseconds of each program; {@link #ratio} is gradient over forward. */
    public record Result(String model, List<String> wrt, int threads, int warmup, int runs, double forwardMedianMs, double forwardP90Ms,
                         double gradientMedianMs, double gradientP90Ms, int forwardKernels, int gradientKernels) {
        public double ratio() {
            return gradientMedianMs / forwardMedianMs;
        }

        /** One header line and one row per program; the gradient's row carries the ratio. */
        public void printTable(PrintWriter out) {
            out.printf("%-10s %8s %10s %10s %10s%n", "program", "kernels", "median ms", "p90 ms", "ratio");
            out.printf(Locale.ROOT, "%-10s %8d %10.3f %10.3f %9.2fx%n", "forward", forwardKernels, forwardMedianMs, forwardP90Ms, 1.0);
            out.printf(Locale.ROOT, "%-10s %8d %10.3f %10.3f %9.2fx%n", "gradient", gradientKernels, gradientMedianMs, gradientP90Ms, ratio());
            out.printf(Locale.ROOT, "%s: gradient wrt %s, %d thread(s), median of %d alternating runs each after %d warm-up rounds%n", model,
                    String.join(",", wrt), threads, runs, warmup);
        }
    }

    private GradientBench() {}

    /**
     * Compiles {@code @main} of {@code module} and its gradient with respect to {@code wrt} (all parameters when empty)
     * into {@code dir}/forward and {@code dir}/gradient, then times them: {@code warmup} untimed rounds, {@code runs}
     * timed ones.
     */
    public static Result measure(String model, IRModule module, List<String> wrt, Path dir, int threads, int warmup, int runs, long seed) {
        IRModule typed = TypeInference.infer(module).module();
        Function main = typed.main().orElseThrow(() -> new IllegalArgumentException("the module has no @main"));
        List<String> names = wrt.isEmpty() ? main.params().stream().map(Var::name).toList() : wrt;
        IRModule forward = OptPipeline.optimize(typed, 3);
        IRModule gradient = OptPipeline.optimize(GradientPipeline.simplify(ReverseMode.gradient(typed, "main", names)), 3);
        ArtifactCompiler.Artifact fa = ArtifactCompiler.compile(forward, CompileOptions.host(3), dir.resolve("forward"));
        ArtifactCompiler.Artifact ga = ArtifactCompiler.compile(gradient, CompileOptions.host(3), dir.resolve("gradient"));
        List<NDArray> inputs = inputs(main, seed);
        try (CompiledRunner f = new CompiledRunner(CompiledModel.load(fa.dir()), threads, "forward");
             CompiledRunner g = new CompiledRunner(CompiledModel.load(ga.dir()), threads, "gradient")) {
            double[][] t = SideBySide.alternate(List.of(f, g), inputs, warmup, runs);
            return new Result(model, names, threads, warmup, runs, SideBySide.percentile(t[0], 0.5), SideBySide.percentile(t[0], 0.9),
                    SideBySide.percentile(t[1], 0.5), SideBySide.percentile(t[1], 0.9), fa.kernels().size(), ga.kernels().size());
        }
    }

    /** One fused kernel of the gradient program timed alone: its name, what it computes, its median ms and share of the sum. */
    public record KernelTime(String name, String ops, double medianMs, double share) {}

    /**
     * Where the gradient program's time goes: each of its fused kernels compiled as a program of its own (the primitive
     * function as {@code @main}, -O3, so it fuses back into the one kernel) and timed on seeded inputs, in turns, as
     * {@link SideBySide#alternate} does; sorted by median, each with its share of the medians' sum. Costs one C compile
     * per kernel, so it is opt-in. A kernel alone runs with its inputs hot in cache, so the shares are of kernel work,
     * not of the executor's copies or of cache misses between kernels.
     */
    public static List<KernelTime> kernelTimes(IRModule module, List<String> wrt, Path dir, int threads, int warmup, int runs, long seed) {
        IRModule typed = TypeInference.infer(module).module();
        Function main = typed.main().orElseThrow(() -> new IllegalArgumentException("the module has no @main"));
        List<String> names = wrt.isEmpty() ? main.params().stream().map(Var::name).toList() : wrt;
        IRModule gradient = OptPipeline.optimize(GradientPipeline.simplify(ReverseMode.gradient(typed, "main", names)), 3);
        List<GraphPlan.Kernel> kernels = GraphBuilder.build(gradient).kernels();
        List<CompiledRunner> runners = new ArrayList<>();
        List<List<NDArray>> inputs = new ArrayList<>();
        try {
            for (int i = 0; i < kernels.size(); i++) {
                Function prim = kernels.get(i).primitive();
                IRModule alone = TypeInference.infer(IRModule.fromMain(new Function(prim.params(), prim.body(), prim.retType()))).module();
                ArtifactCompiler.Artifact a = ArtifactCompiler.compile(OptPipeline.optimize(alone, 3), CompileOptions.host(3), dir.resolve("k" + i));
                runners.add(new CompiledRunner(CompiledModel.load(a.dir()), threads, kernels.get(i).name()));
                inputs.add(inputs(alone.main().orElseThrow(), seed));
            }
            for (int w = 0; w < warmup; w++) for (int k = 0; k < runners.size(); k++) runners.get(k).run(inputs.get(k));
            double[][] t = new double[runners.size()][runs];
            for (int r = 0; r < runs; r++) {
                for (int k = 0; k < runners.size(); k++) {
                    // the untimed run first, as in SideBySide.alternate: each kernel timed in its own steady state
                    runners.get(k).run(inputs.get(k));
                    long s = System.nanoTime();
                    runners.get(k).run(inputs.get(k));
                    t[k][r] = (System.nanoTime() - s) / 1e6;
                }
            }
            double sum = 0;
            double[] med = new double[runners.size()];
            for (int k = 0; k < med.length; k++) sum += med[k] = SideBySide.percentile(t[k], 0.5);
            List<KernelTime> out = new ArrayList<>();
            for (int k = 0; k < med.length; k++) out.add(new KernelTime(kernels.get(k).name(), KernelProfiler.ops(kernels.get(k).primitive()), med[k], med[k] / sum));
            out.sort(java.util.Comparator.comparingDouble(KernelTime::medianMs).reversed());
            return out;
        } finally {
            runners.forEach(CompiledRunner::close);
        }
    }

    /** Seeded uniform [-1, 1) values of every parameter's type, one seed per parameter (the program is the same for any values). */
    static List<NDArray> inputs(Function main, long seed) {
        List<NDArray> in = new ArrayList<>();
        long s = seed;
        for (Var p : main.params()) {
            if (!(p.annotation() instanceof TensorType t)) throw new IllegalArgumentException("%" + p.name() + " is not a tensor: " + p.annotation());
            in.add(GradientCheck.uniform(t, -1, 1, s++));
        }
        return in;
    }
}
