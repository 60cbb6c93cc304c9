package dev.relayfarm.cli;

import dev.relayfarm.bench.ArtifactComparison;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.MeasureOptions;
import dev.relayfarm.tuning.measure.SandboxedRunner;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.record.RecordFile;
import dev.relayfarm.tuning.record.TuningRecord;
import dev.relayfarm.tuning.scheduler.ModelGuard;
import dev.relayfarm.tuning.scheduler.TaskScheduler;
import dev.relayfarm.tuning.scheduler.Tuner;
import dev.relayfarm.tuning.search.SearchStrategies;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc tune MODEL -o records.jsonl}: tunes the model's kernels on this machine — the library's {@link Tuner}
 * in one process — appending every measurement to the records file, with a progress line per round and a table per
 * workload at the end. {@code relayc compile --schedules records.jsonl} then applies what beat the defaults.
 */
@Command(name = "tune", mixinStandardHelpOptions = true,
        description = {"Tune a model's kernels on this machine: search each workload's schedule space (xgb: a learned cost model,",
                "ga, random, grid), build and measure every candidate in a sandboxed process beside its template default, and append",
                "every measurement to the records file (JSON lines). Give a budget: --trials and/or --budget. Then",
                "relayc compile MODEL --schedules RECORDS applies, per workload, the best record measured faster than its default."})
public final class TuneCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "MODEL", description = "an ONNX model or Relay text file")
    Path model;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "RECORDS.jsonl", description = "tuning records are appended here (created if missing)")
    Path output;

    @Option(names = "--trials", paramLabel = "N", defaultValue = "0", description = "measure at most N configs over all workloads (0: no trial limit)")
    int trials;

    @Option(names = "--budget", paramLabel = "DURATION", description = "stop after this much wall-clock time, e.g. 20m, 90s, 1h")
    String budget;

    @Option(names = "--strategy", defaultValue = "xgb", description = "search: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE})",
            completionCandidates = Strategies.class)
    String strategy;

    @Option(names = "--resume", paramLabel = "RECORDS.jsonl", description = "records of earlier runs: their configs are not measured again and their costs count (repeatable)")
    List<Path> resume = List.of();

    @Option(names = "--batch", defaultValue = "16", description = "configs per round (default ${DEFAULT-VALUE})")
    int batch;

    @Option(names = "--patience", defaultValue = "64", description = "a workload stops after this many trials without improvement (default ${DEFAULT-VALUE})")
    int patience;

    @Option(names = "--seed", defaultValue = "1", description = "search seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--threads", defaultValue = "0", description = "threads a kernel runs with while measured (default 0: all online CPUs)")
    int threads;

    @Option(names = "--target", defaultValue = CompileRequest.DEFAULT_TARGET, description = "target (default \"${DEFAULT-VALUE}\"); tuning measures on this machine, so a native one")
    String target;

    @Option(names = "-O", paramLabel = "LEVEL", defaultValue = "" + CompileRequest.DEFAULT_OPT_LEVEL,
            description = "optimization level (" + OptLevels.FUSED_TEXT + ", default ${DEFAULT-VALUE}): the kernels tuned are those this level fuses")
    int optLevel;

    @Option(names = "--shape", paramLabel = "NAME=DIMS", description = "bind an input's dynamic dims, e.g. x=1x3x224x224 (repeatable)")
    List<String> shapes = List.of();

    @Spec
    CommandSpec spec;

    /** The strategy names for picocli's completion and help. */
    static final class Strategies extends ArrayList<String> {
        Strategies() {
            super(SearchStrategies.NAMES);
        }
    }

    @Option(names = "--model-check", paramLabel = "on|off", defaultValue = "on",
            description = {"after tuning, time the whole model with the tuned configs against its defaults, side by side (default ${DEFAULT-VALUE});",
                    "tuned configs that do not make it faster are rejected in the records file, so compile --schedules skips them"})
    String modelCheck;

    @Option(names = "--check-runs", paramLabel = "N", defaultValue = "30",
            description = "timed runs of each artifact in the model check, or more to time each for a second (default ${DEFAULT-VALUE})")
    int checkRuns;

    @Option(names = "--winograd", paramLabel = "on|off", description = CommonOptions.WINOGRAD_HELP)
    String winograd;

    @Override
    public Integer call() throws IOException {
        Optional<String> badWinograd = CommonOptions.winogradError(winograd);
        if (badWinograd.isPresent()) return CliErrors.report(spec, badWinograd.get());
        if (!CompileRequest.OPT_LEVELS.contains(optLevel)) return CliErrors.report(spec, "-O must be " + CompileRequest.OPT_LEVELS + " for tune, got " + optLevel);
        Duration time = budget == null ? null : RunCommand.duration("--budget", budget);
        Tuner.Options options;
        try {
            options = new Tuner.Options(strategy, batch, trials, time, seed, patience);
        } catch (IllegalArgumentException e) {
            return CliErrors.report(spec, e.getMessage() + (trials == 0 && time == null ? " (--trials N and/or --budget DURATION)" : ""));
        }
        if (threads < 0) return CliErrors.report(spec, "--threads must be 0 (all online CPUs) or more, got " + threads);
        if (!modelCheck.equals("on") && !modelCheck.equals("off")) return CliErrors.report(spec, "--model-check must be on or off, got \"" + modelCheck + "\"");
        if (checkRuns < 1) return CliErrors.report(spec, "--check-runs must be at least 1, got " + checkRuns);
        Path dir = output.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir) || !Files.isWritable(dir)) {
            return CliErrors.report(spec, "cannot write records to " + output + ": " + (dir == null ? "no folder" : dir + " is not a writable folder"));
        }
        Target t = Target.parse(target);
        if (t.isCross()) return CliErrors.report(spec, "tune measures on this machine: " + t + " is a cross target");
        CCompiler cc = CCompiler.forTarget(t).orElse(null);
        if (cc == null) return CliErrors.report(spec, "no C compiler found (set $CC, or install cc, gcc or clang): tuning builds every candidate");
        List<TuningRecord> prior = new ArrayList<>();
        for (Path p : resume) {
            if (!Files.isRegularFile(p)) return CliErrors.report(spec, "no such file: " + p);
            prior.addAll(RecordFile.read(p));
        }
        CompileRequest request = new CompileRequest(ModelFiles.read(model), t, optLevel, InputShapes.of(shapes));
        IRModule module = Stages.inferTypes(Stages.importModel(request));
        Stages.checkExecutable(module);
        IRModule optimized = Stages.optimize(module, optLevel, t, CommonOptions.disabledPasses(winograd));
        List<TuningTask> tasks = Stages.tasks(optimized, t);
        Map<String, Integer> calls = Tuner.callsPerWorkload(optimized, tasks);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        RecordContext context = RecordContext.local(t, cc);
        out.printf("tuning %s: %d workloads, strategy %s, budget %s, device class %s%n", model, tasks.size(), strategy, budgetText(time),
                context.device().deviceClass());
        out.flush();
        SandboxedRunner runner = new SandboxedRunner(cc, MeasureOptions.DEFAULT.withThreads(threads));
        Tuner.Result result = new Tuner(runner, context, output, options, (task, b, status) -> {
            err.println(progressLine(task, status));
            err.flush();
        }).tune(tasks, calls, prior);
        printTable(out, result);
        if (result.status().tasks().stream().noneMatch(p -> Double.isFinite(p.defaultUs()))) {
            return CliErrors.report(spec, "no workload's default config could be measured (see the notes above and the records' errors)");
        }
        try {
            if (modelCheck.equals("on")) checkModel(out, optimized, tasks, t);
        } catch (RuntimeException e) {
            // the records are whole and kept; only the check's verdict is missing
            out.printf("records: %s (not checked on the whole model)%n", output);
            out.flush();
            return CliErrors.report(spec, "model check failed: " + e.getMessage() + "; the records are kept, unchecked (--model-check off skips the check)");
        }
        out.printf("records: %s; apply with relayc compile %s --schedules %s%n", output, model, output);
        out.flush();
        return 0;
    }

    /**
     * The {@link ModelGuard}: the model with what the records would apply, timed against its defaults; the configs that
     * did not make it faster are appended to the records as rejected schedule lines.
     */
    private void checkModel(PrintWriter out, IRModule optimized, List<TuningTask> tasks, Target t) throws IOException {
        Path dir = BenchCommand.tempDir();
        BenchCommand.deleteOnExit(dir);
        ModelGuard.Verdict v;
        try (ArtifactComparison timer = new ArtifactComparison(optimized, t, optLevel, threads, checkRuns, dir)) {
            v = ModelGuard.checkRecords(output, tasks, t, timer);
        }
        if (v.comparisons().isEmpty()) {
            out.println("model check: no tuned config beat its default, nothing to check");
            return;
        }
        for (ModelGuard.Comparison c : v.comparisons()) out.println("model check: " + describe(c));
        if (v.rejected().isEmpty()) {
            out.printf("model check: all %d tuned workloads kept%n", v.kept().size());
        } else {
            out.printf("model check: %d tuned workloads kept, %d rejected (%d rejected schedule lines appended to %s)%n", v.kept().size(),
                    v.rejected().size(), v.rejectionLines(), output);
        }
    }

    private static String describe(ModelGuard.Comparison c) {
        return String.format(Locale.ROOT, "%d tuned workloads: %.3f ms untuned, %.3f ms tuned (%.3fx), medians of %d runs each, side by side; "
                + "median round %.3fx, tuned faster in %d of %d rounds", c.workloads().size(), c.untunedMs(), c.tunedMs(), c.ratio(), c.runs(),
                c.medianRound(), c.roundsWon(), c.roundRatios().size());
    }

    private String budgetText(Duration time) {
        if (trials > 0 && time != null) return trials + " trials or " + budget;
        return trials > 0 ? trials + " trials" : budget;
    }

    /** One line per round: the run's totals, and the workload just measured. */
    static String progressLine(TuningTask task, Tuner.Status s) {
        long measured = s.tasks().stream().filter(p -> p.trials() > 0).count();
        TaskScheduler.Progress p = s.tasks().stream().filter(x -> x.task().key().equals(task.key())).findFirst().orElseThrow();
        Duration eta = s.eta();
        // the model's estimate needs every workload's default: until then, only the count
        String model = Double.isFinite(s.modelUs()) ? String.format(Locale.ROOT, "model %s -> %s us (%.2fx)", us(s.defaultModelUs()), us(s.modelUs()),
                s.defaultModelUs() / s.modelUs()) : "model: not every workload measured yet";
        return String.format(Locale.ROOT, "tune: %d trials, %s, %d/%d workloads measured, %s%s | %s %s -> %s us (%.2fx)", s.trials(),
                seconds(s.elapsed()), measured, s.tasks().size(), model, eta == null ? "" : ", ETA " + seconds(eta), shorten(task.key()),
                us(p.defaultUs()), us(p.bestUs()), p.speedup());
    }

    /** Three significant digits: kernels run from tens of nanoseconds to milliseconds. */
    private static String us(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f", v);
    }

    private static void printTable(PrintWriter out, Tuner.Result r) {
        // totals over the workloads whose default was measured (the budget may end before every one was)
        List<TaskScheduler.Progress> measured = r.status().tasks().stream().filter(p -> Double.isFinite(p.defaultUs())).toList();
        double untuned = measured.stream().mapToDouble(p -> p.calls() * p.defaultUs()).sum();
        double tuned = measured.stream().mapToDouble(p -> p.calls() * p.bestUs()).sum();
        out.printf("%-64s %6s %6s %12s %12s %8s %7s%n", "workload", "calls", "trials", "default us", "best us", "speedup", "share");
        for (TaskScheduler.Progress p : r.status().tasks()) {
            if (!Double.isFinite(p.defaultUs())) {
                out.printf(Locale.ROOT, "%-64s %6d %6d %12s %12s %8s %7s%n", shorten(p.task().key()), p.calls(), p.trials(), "-", "-", "-", "-");
                continue;
            }
            out.printf(Locale.ROOT, "%-64s %6d %6d %12s %12s %7.2fx %6.1f%%%n", shorten(p.task().key()), p.calls(), p.trials(), us(p.defaultUs()),
                    us(p.bestUs()), p.speedup(), 100 * p.calls() * p.defaultUs() / untuned);
        }
        out.printf(Locale.ROOT, "model (kernel time per run, estimated from the workloads' costs%s): %.1f us untuned, %.1f us tuned, %.2fx; %d trials in %s%n",
                measured.size() == r.status().tasks().size() ? "" : ", " + measured.size() + " of " + r.status().tasks().size() + " workloads measured",
                untuned, tuned, untuned / tuned, r.status().trials(), seconds(r.status().elapsed()));
        r.notes().forEach((k, v) -> out.println("  " + shorten(k) + ": " + v));
    }

    private static String shorten(String key) {
        return key.length() <= 64 ? key : key.substring(0, 61) + "...";
    }

    private static String seconds(Duration d) {
        long s = d.toSeconds();
        return s >= 60 ? (s / 60) + "m" + String.format(Locale.ROOT, "%02d", s % 60) + "s" : s + "s";
    }
}
