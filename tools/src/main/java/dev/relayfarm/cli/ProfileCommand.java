package dev.relayfarm.cli;

import dev.relayfarm.bench.BenchInputs;
import dev.relayfarm.bench.KernelProfiler;
import dev.relayfarm.kernel.codegen.MachinePeak;
import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.tuning.record.ScheduleFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc profile MODEL}: the model compiled as {@code relayc bench} compiles ours, then run with the executor timing
 * each kernel call ({@link KernelProfiler}); a table of kernels by time. The work is the library's; this reads options.
 */
@Command(name = "profile", mixinStandardHelpOptions = true,
        description = {"Profile a compiled model kernel by kernel: MODEL (an .onnx file or a Relay text file with seeded random inputs, or an",
                "ONNX test folder with its first data set) is compiled as relayc bench compiles ours, then run with the graph executor timing every",
                "kernel call and copy (relayfarm_profile). Prints the kernels sorted by time: calls per run, median ms per run over",
                "the runs (all calls summed), share of the kernels' total, GFLOP/s of the convolutions and matrix products",
                "(2 FLOPs per multiply-accumulate, from the typed shapes) and that as %% of the peak, the kernel's template, fused ops",
                "and workload key; then the totals (kernels, the executor's copies, the whole call). The clock read around each step",
                "costs a little: use relayc bench for latency. Measure on an idle machine."})
public final class ProfileCommand implements Callable<Integer> {
    @Parameters(paramLabel = "MODEL", description = ".onnx file, ONNX test folder or Relay text file (seeded random inputs)")
    Path model;

    @Option(names = "--threads", defaultValue = "2", description = "threads of the compiled artifact (default ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--runs", defaultValue = "50", description = "profiled runs; each kernel's time is the median over them (default ${DEFAULT-VALUE})")
    int runs;

    @Option(names = "--warmup", defaultValue = "5", description = "untimed runs first (default ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--shape", paramLabel = "NAME=DIMS", description = "bind an input's dynamic dims, e.g. x=1x3x224x224 (repeatable)")
    List<String> shapes = List.of();

    @Option(names = "-O", paramLabel = "LEVEL", defaultValue = "" + CompileRequest.DEFAULT_OPT_LEVEL,
            description = "optimization level (" + OptLevels.PIPELINE_TEXT + ", default ${DEFAULT-VALUE}); compiling needs fusion (-O1 or higher)")
    int optLevel;

    @Option(names = "--schedules", paramLabel = "FILE.jsonl",
            description = "compile with these stored schedules or tuning records, chosen by the same rule as relayc compile --schedules")
    Path schedules;

    @Option(names = "--top", paramLabel = "N", defaultValue = "0", description = "print only the N slowest kernels (default: all)")
    int top;

    @Option(names = "--peak-gflops", paramLabel = "GFLOPS",
            description = "peak GFLOP/s for the %% of peak column; default: measured before profiling, as many threads (at most the "
                    + "available cores) running 12 independent chains of 8-lane float32 FMAs on registers for 0.3 s (MachinePeak): "
                    + "the FMA throughput the kernels could reach at the clock the cores actually run")
    Double peakGflops;

    @Option(names = "--peak-gbps", paramLabel = "GBPS",
            description = "memory bandwidth in GB/s for the %%bw column (each kernel's bytes read and written at least, per second, "
                    + "over this); default: measured before profiling, as many threads streaming a[i] = b[i] + s * c[i] over three "
                    + "64 MiB float arrays (MachinePeak, STREAM's triad)")
    Double peakGbps;

    @Option(names = "--json", description = "print one JSON object instead of the table")
    boolean json;

    @Option(names = "--target", defaultValue = CompileRequest.DEFAULT_TARGET, description = "target of the compiled artifact (default ${DEFAULT-VALUE})")
    String target;

    @Option(names = "--keep", paramLabel = "DIR", description = "write the compiled artifact to DIR (default: a temporary folder, deleted)")
    Path keep;

    @Spec
    CommandSpec spec;

    @Option(names = "--winograd", paramLabel = "on|off", description = CommonOptions.WINOGRAD_HELP)
    String winograd;

    @Override
    public Integer call() {
        Optional<String> badWinograd = CommonOptions.winogradError(winograd);
        if (badWinograd.isPresent()) return CliErrors.report(spec, badWinograd.get());
        PrintWriter out = spec.commandLine().getOut();
        Optional<String> badLevel = CommonOptions.optLevelError(optLevel);
        if (badLevel.isPresent()) return CliErrors.report(spec, badLevel.get());
        if (optLevel < 1) return CliErrors.report(spec, "profiling runs the compiled artifact, which needs fusion: use -O1 or higher");
        if (threads < 1 || runs < 1 || warmup < 0) return CliErrors.report(spec, "--threads and --runs must be at least 1 and --warmup at least 0");
        if (peakGflops != null && !(peakGflops > 0)) return CliErrors.report(spec, "--peak-gflops must be positive, got " + peakGflops);
        if (peakGbps != null && !(peakGbps > 0)) return CliErrors.report(spec, "--peak-gbps must be positive, got " + peakGbps);
        Map<String, List<Long>> bound;
        try {
            bound = InputShapes.of(shapes);
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, e.getMessage());
        }
        double peak = peakGflops != null ? peakGflops
                : MachinePeak.measure(Math.min(threads, Runtime.getRuntime().availableProcessors())).orElse(Double.NaN);
        double bandwidth = peakGbps != null ? peakGbps
                : MachinePeak.bandwidth(Math.min(threads, Runtime.getRuntime().availableProcessors())).orElse(Double.NaN);
        KernelProfiler.Profile p;
        try {
            p = profile(bound, peak, bandwidth);
        } catch (RuntimeException e) {
            // as relayc bench reports a model it cannot load or run: user errors by message, internal ones named by their class
            String user = CliErrors.userMessage(e);
            return CliErrors.report(spec, model + ": " + (user != null ? user : e.getClass().getSimpleName() + ": " + e.getMessage()));
        }
        if (json) out.println(p.toJson());
        else p.printTable(out, top);
        return 0;
    }

    private KernelProfiler.Profile profile(Map<String, List<Long>> bound, double peak, double bandwidth) {
        // Relay text (a quantized module from relayc quantize, say) has no declared inputs to draw from until it is
        // compiled: its inputs come from the artifact's signature, with the same seed
        boolean relay = Files.isRegularFile(model) && ModelFiles.read(model).format() == ModelFormat.RELAY;
        BenchInputs in = relay ? null : BenchInputs.load(model, bound, 42);
        Target t = Target.parse(target);
        IRModule imported = relay ? Stages.importModel(ModelFiles.read(model), bound) : Stages.importModel(ModelFiles.read(in.onnx()), in.shapes());
        IRModule optimized = Stages.optimize(imported, optLevel, t, CommonOptions.disabledPasses(winograd));
        Map<String, ScheduleConfig> configs = schedules == null ? Map.of() : readSchedules(optimized, t);
        Path dir = keep != null ? keep : BenchCommand.tempDir();
        ArtifactCompiler.Artifact artifact = Stages.codegen(optimized, new CompileOptions(t, optLevel, configs), dir);
        try (CompiledModel compiled = CompiledModel.load(dir)) {
            if (keep == null) BenchCommand.deleteOnExit(dir);
            String name = relay ? model.getFileName().toString() : in.model();
            List<NDArray> values = relay ? BenchInputs.random(compiled.inputs(), 42) : in.values();
            return KernelProfiler.profile(name, artifact, compiled, values, new KernelProfiler.Options(threads, warmup, runs, peak, bandwidth));
        }
    }

    private Map<String, ScheduleConfig> readSchedules(IRModule optimized, Target t) {
        try {
            return ScheduleFile.choose(schedules, Stages.tasks(optimized, t), t, null);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + schedules + ": " + e.getMessage(), e);
        }
    }
}
