package dev.relayfarm.cli;

import dev.relayfarm.bench.BenchInputs;
import dev.relayfarm.bench.CompiledRunner;
import dev.relayfarm.bench.InterpreterRunner;
import dev.relayfarm.bench.ModelRunner;
import dev.relayfarm.bench.OrtRunner;
import dev.relayfarm.bench.SideBySide;
import dev.relayfarm.bench.VmRunner;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.record.ScheduleFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc bench MODEL...}: our engine and ONNX Runtime on the same inputs, in rounds of blocks in one process
 * ({@link SideBySide#alternate}), after warm-up; a table of median/p90 latency, the ratio ours/ORT and the output difference.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Benchmark models against ONNX Runtime (CPU provider, same intra-op thread count, its default graph",
                "optimizations), in one process: in each of up to 5 rounds each engine, in a shuffled order, runs its warm-up runs",
                "then a block of timed runs back to back, and then stops its background threads (ONNX Runtime's session is closed:",
                "its workers keep spinning after a run and took up to half the cores from the engine timed next). Each engine is",
                "timed in its own steady state, as a server running inferences back to back sees it. MODEL is an .onnx file (seeded random inputs",
                "of its declared shapes) or an ONNX test folder (its first data set). Prints median and p90 latency of each,",
                "the ratio ours/ORT (below 1: we are faster) and the largest absolute output difference; with several models",
                "also the geometric mean of the ratios. Exit 2 on a model that cannot be loaded or run.",
                "Measure on an idle machine (no build or test running): ONNX Runtime's spinning worker threads suffer more from",
                "contention than ours, which flatters us. Use --iterations 30 or more for numbers worth comparing.",
                "relayc profile MODEL shows where our time goes, kernel by kernel."})
public final class BenchCommand implements Callable<Integer> {
    @Parameters(paramLabel = "MODEL", arity = "1..*", description = ".onnx files or ONNX test folders")
    List<Path> models;

    @Option(names = "--backend", defaultValue = "c", description = "our engine: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE})")
    Backend backend;

    @Option(names = "--vs", defaultValue = "onnxruntime",
            description = "reference: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}); untuned: the same model compiled with template defaults, to see what --schedules gained")
    Reference vs;

    @Option(names = "--schedules", paramLabel = "FILE.jsonl",
            description = "compile ours with these stored schedules or tuning records, chosen by the same rule as relayc compile --schedules")
    Path schedules;

    @Option(names = "--threads", defaultValue = "2", description = "intra-op threads for ONNX Runtime and the compiled artifact (default ${DEFAULT-VALUE}); --backend interp uses the JVM's common pool")
    int threads;

    @Option(names = "-O", paramLabel = "LEVEL", defaultValue = "" + CompileRequest.DEFAULT_OPT_LEVEL,
            description = "optimization level (" + OptLevels.PIPELINE_TEXT + ", default ${DEFAULT-VALUE}); --backend c needs fusion (-O1 or higher)")
    int optLevel;

    @Option(names = "--shape", paramLabel = "NAME=DIMS", description = "bind an input's dynamic dims, e.g. x=1x3x224x224 (repeatable)")
    List<String> shapes = List.of();

    @Option(names = "--warmup", defaultValue = "3", description = "untimed runs of each engine before each of its blocks (default ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--iterations", defaultValue = "20", description = "timed runs of each engine (default ${DEFAULT-VALUE})")
    int iterations;

    @Option(names = "--json", description = "print one JSON object per model instead of the table")
    boolean json;

    @Spec
    CommandSpec spec;

    @Option(names = "--target", defaultValue = CompileRequest.DEFAULT_TARGET, description = "target of the compiled artifact (default ${DEFAULT-VALUE})")
    String target;

    @Option(names = "--keep", paramLabel = "DIR", description = "write the compiled artifacts under DIR/<model> (default: a temporary folder, deleted)")
    Path keep;

    enum Backend { c, interp }

    enum Reference { onnxruntime, untuned, pinned }

    @Option(names = "--at", paramLabel = "NAME=DIMS[,NAME=DIMS...]",
            description = {"a dynamic model compiled once (its dynamic dims left as ? by --shape, e.g. x=1x3x48x?) and run at this",
                    "input size, a table row each (repeatable: --at x=1x3x48x160 --at x=1x3x48x800); .onnx files only.",
                    "With --vs pinned the reference is the same model compiled with that size pinned"})
    List<String> at = List.of();

    @Option(names = "--winograd", paramLabel = "on|off", description = CommonOptions.WINOGRAD_HELP)
    String winograd;

    @Override
    public Integer call() {
        Optional<String> badWinograd = CommonOptions.winogradError(winograd);
        if (badWinograd.isPresent()) return CliErrors.report(spec, badWinograd.get());
        PrintWriter out = spec.commandLine().getOut();
        Optional<String> badLevel = CommonOptions.optLevelError(optLevel);
        if (badLevel.isPresent()) {
            return CliErrors.report(spec, badLevel.get());
        }
        if (vs == Reference.untuned && schedules == null) {
            return CliErrors.report(spec, "--vs untuned compares the artifact tuned with --schedules FILE against the untuned one: give --schedules");
        }
        if ((vs == Reference.untuned || schedules != null) && backend != Backend.c) {
            return CliErrors.report(spec, "--schedules and --vs untuned compare compiled artifacts: use --backend c");
        }
        if (threads < 1 || iterations < 1 || warmup < 0) {
            return CliErrors.report(spec, "--threads and --iterations must be at least 1 and --warmup at least 0");
        }
        Map<String, List<Long>> bound;
        try {
            bound = InputShapes.of(shapes);
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, e.getMessage());
        }
        if (vs == Reference.pinned && at.isEmpty()) {
            return CliErrors.report(spec, "--vs pinned compares a model compiled once for every size with the same model compiled for each --at size: give --at");
        }
        if (!at.isEmpty() && (backend != Backend.c || vs == Reference.untuned || schedules != null)) {
            return CliErrors.report(spec, "--at benchmarks one compiled artifact at several sizes: use --backend c, without --schedules or --vs untuned");
        }
        List<Map<String, List<Long>>> points = new ArrayList<>();
        try {
            for (String point : at) {
                Map<String, List<Long>> sizes = new java.util.LinkedHashMap<>(bound);
                sizes.putAll(InputShapes.of(List.of(point.split(","))));
                points.add(sizes);
            }
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, "--at: " + e.getMessage());
        }
        // the reference's column: ONNX Runtime's, or our own artifact's (untuned, pinned)
        String ref = vs == Reference.onnxruntime ? "ort" : vs.name();
        if (!json) {
            out.printf("%-24s %-18s %10s %10s %10s %10s %8s %12s%n", "model", "ours", "ours ms", "ours p90", ref + " ms", ref + " p90",
                    "ratio", "max |diff|");
        }
        List<Double> ratios = new ArrayList<>();
        int rc = 0;
        for (Path model : models) {
            try {
                for (SideBySide.Result r : at.isEmpty() ? List.of(benchOne(model, bound)) : benchAtSizes(model, bound, points)) {
                    ratios.add(r.ratio());
                    if (json) out.println(r.toJson());
                    else out.printf(Locale.ROOT, "%-24s %-18s %10.3f %10.3f %10.3f %10.3f %7.2fx %12.3e%n", r.model(), r.ours(),
                            r.oursMedianMs(), r.oursP90Ms(), r.refMedianMs(), r.refP90Ms(), r.ratio(), r.maxAbsDiff());
                }
            } catch (RuntimeException e) {
                // One model's failure does not stop the others; internal errors are named by their class.
                String user = CliErrors.userMessage(e);
                CliErrors.report(spec, model + ": " + (user != null ? user : e.getClass().getSimpleName() + ": " + e.getMessage()));
                rc = 2;
            }
        }
        if (!json && ratios.size() > 1) {
            double log = 0;
            for (double r : ratios) log += Math.log(r);
            out.printf(Locale.ROOT, "geometric mean ratio ours/%s over %d %s: %.2fx (threads %d, %d iterations after %d warm-up)%n",
                    ref, ratios.size(), at.isEmpty() ? "models" : "rows", Math.exp(log / ratios.size()), threads, iterations, warmup);
        }
        return rc;
    }

    private SideBySide.Result benchOne(Path model, Map<String, List<Long>> bound) {
        BenchInputs in = BenchInputs.load(model, bound, 42);
        Target t = Target.parse(target);
        IRModule m = Stages.importModel(ModelFiles.read(in.onnx()), in.shapes());
        IRModule optimized = optLevel == 0 ? m : Stages.optimize(m, optLevel, t, CommonOptions.disabledPasses(winograd));
        Map<String, ScheduleConfig> tuned = schedules == null ? Map.of() : readSchedules(Stages.tasks(optimized, t), t);
        try (ModelRunner ours = ours(in, optimized, t, tuned, ""); ModelRunner ref = switch (vs) {
            case onnxruntime -> OrtRunner.open(in.onnx(), threads);
            case untuned -> ours(in, optimized, t, Map.of(), "-untuned");
            case pinned -> throw new IllegalStateException("--vs pinned runs with --at only"); // call() refused it
        }) {
            return SideBySide.measure(in.model(), ours, ref, in.values(), threads, warmup, iterations);
        }
    }

    /**
     * {@code model} compiled once with {@code bound} (dims left dynamic compile for the VM), then for each point its
     * inputs at that size run by the one artifact and by the reference: ONNX Runtime, or with {@code --vs pinned} the
     * same model compiled with that size pinned. Rows are named {@code model@NAME=DIMS}.
     */
    private List<SideBySide.Result> benchAtSizes(Path model, Map<String, List<Long>> bound, List<Map<String, List<Long>>> points) {
        if (Files.isDirectory(model)) throw new IllegalArgumentException(model + ": --at runs an .onnx file at the sizes given, not an ONNX test folder (its data has one size)");
        Target t = Target.parse(target);
        List<SideBySide.Result> rows = new ArrayList<>();
        try (ModelRunner once = compiled(Stages.inferTypes(Stages.importModel(ModelFiles.read(model), bound)), t, BenchInputs.modelName(model), "")) {
            for (int i = 0; i < points.size(); i++) {
                BenchInputs in = BenchInputs.load(model, points.get(i), 42);
                String name = in.model() + "@" + at.get(i);
                try (ModelRunner ref = vs == Reference.pinned
                        ? compiled(Stages.inferTypes(Stages.importModel(ModelFiles.read(model), in.shapes())), t, name, "-pinned")
                        : OrtRunner.open(in.onnx(), threads)) {
                    rows.add(SideBySide.measure(name, once, ref, in.values(), threads, warmup, iterations));
                }
            }
        }
        return rows;
    }

    /** A typed module compiled for whichever executor runs it: the graph executor's artifact, or the VM's for dynamic shapes and control flow. */
    private ModelRunner compiled(IRModule typed, Target t, String model, String suffix) {
        Path dir = keep != null ? keep.resolve(model + suffix) : tempDir();
        if (keep == null) deleteOnExit(dir);
        CompileOptions options = new CompileOptions(t, optLevel, Map.of());
        if (Stages.executor(typed) == Stages.Executor.VM) {
            Stages.codegenVm(typed, options, dir);
            return new VmRunner(dev.relayfarm.vm.VmArtifact.load(dir), threads, "relayfarm-vm" + suffix);
        }
        Stages.codegen(Stages.optimize(typed, optLevel, t, CommonOptions.disabledPasses(winograd)), options, dir);
        return CompiledRunner.load(dir, threads, "relayfarm-c" + suffix);
    }

    static Path tempDir() {
        try {
            return Files.createTempDirectory("relayc-bench-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary folder: " + e.getMessage(), e);
        }
    }

    /** The loaded library stays mapped until exit, so the folder goes then. */
    static void deleteOnExit(Path dir) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // a leftover temporary folder is harmless
            }
        }));
    }

    /** The configs {@code relayc compile --schedules} would apply, for this machine's device class. */
    private Map<String, ScheduleConfig> readSchedules(List<TuningTask> tasks, Target t) {
        try {
            return ScheduleFile.choose(schedules, tasks, t, null);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + schedules + ": " + e.getMessage(), e);
        }
    }

    /** Our engine on the optimized module; compiled with {@code configs} (stored schedules by workload, or none: defaults). */
    private ModelRunner ours(BenchInputs in, IRModule optimized, Target t, Map<String, ScheduleConfig> configs, String suffix) {
        return switch (backend) {
            case interp -> new InterpreterRunner(optimized);
            case c -> {
                Path dir = keep != null ? keep.resolve(in.model() + suffix) : tempDir();
                Stages.codegen(optimized, new CompileOptions(t, optLevel, configs), dir);
                CompiledModel compiled = CompiledModel.load(dir);
                if (keep == null) deleteOnExit(dir);
                yield new CompiledRunner(compiled, threads, "relayfarm-c" + (schedules == null ? "" : suffix.isEmpty() ? "-tuned" : suffix));
            }
        };
    }

}
