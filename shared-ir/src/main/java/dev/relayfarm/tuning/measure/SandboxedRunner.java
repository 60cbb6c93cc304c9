package dev.relayfarm.tuning.measure;

import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CompileException;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.process.ChildProcess;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.Measurer;
import dev.relayfarm.tuning.TuningTask;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The library's measurement runner (TVM's {@code LocalBuilder} + {@code LocalRunner}, in one class): builds each
 * candidate into its own measurement program and runs it in a {@link Sandbox}, so a broken candidate becomes a typed
 * {@link Measurement.Failure} and the next candidate is measured. The farm's hardware agents call the same code.
 *
 * <p>A batch, in order:
 * <ol>
 *   <li><b>Build</b> the reference (the task's default config) and every candidate: lower and emit C (on the calling
 *       thread, once per config), append the {@link MeasurementDriver}'s {@code main}, compile an executable
 *       ({@link CCompiler#compileExecutable}, content cached), {@link MeasureOptions#buildParallelism} at a time. A
 *       config lowering refuses, or C that does not compile in {@link MeasureOptions#buildTimeout}, is a
 *       {@code COMPILE_ERROR}.</li>
 *   <li><b>Run</b> them one at a time, after every build finished (a compiler running beside a timed kernel would be
 *       timed too): the reference first. Each run computes the outputs once on the batch's seeded inputs, then times.
 *       A non-zero exit or a signal is a {@code RUNTIME_ERROR}, running past {@link MeasureOptions#runTimeout} a
 *       {@code TIMEOUT}, outputs that differ from the reference's ({@link OutputCheck}) a {@code WRONG_ANSWER}
 *       (checked before the timings are read: a wrong kernel has no cost).</li>
 * </ol>
 * The reference must measure; if it does not, nothing in the batch can be checked or compared, and the batch is a
 * {@link BaselineFailedException}. A candidate equal to the reference is not run twice: it gets the reference's
 * measurement.
 *
 * <p>Noise: warm-up calls, {@code number} raised until a repeat lasts {@link MeasureOptions#minRepeatMs}, the median of
 * {@link MeasureOptions#repeat} repeats (with their coefficient of variation reported), an optional cache flush before
 * each repeat, runs never overlapping builds or each other. Pinning is left to the caller (e.g. the JVM under
 * {@code taskset}; children inherit its affinity): on a shared machine a fixed core may be the busy one.
 *
 * <p>Thread-safe. Runs of every runner in this JVM take turns ({@link #HOST_RUNS}): they share this machine, and two
 * kernels timed at once would time each other. Builds of one batch may overlap runs of another.
 */
public final class SandboxedRunner implements Measurer, BatchMeasurer {
    /** The file the driver writes the reference's or candidate's outputs to, in the run's own directory. */
    private static final String OUTPUTS_FILE = "outputs.bin";
    /** How much of a failed program's output goes into a failure's detail (its end: the error is printed last). */
    private static final int DETAIL_CHARS = 2000;

    /** Held by a batch while it runs its programs: the host is one device, measured by one program at a time. */
    private static final ReentrantLock HOST_RUNS = new ReentrantLock();

    private final CCompiler compiler;
    private final MeasureOptions options;
    private final Sandbox sandbox;
    private final long flushBytes;

    /**
     * @param compiler builds the measurement programs (its flags minus {@code -shared}/{@code -fPIC}; its cache)
     * @param workRoot where each run gets its temporary directory
     */
    public SandboxedRunner(CCompiler compiler, MeasureOptions options, Path workRoot) {
        this.options = Objects.requireNonNull(options, "options");
        this.compiler = Objects.requireNonNull(compiler, "compiler").withTimeout(options.buildTimeout());
        this.sandbox = new Sandbox(Objects.requireNonNull(workRoot, "workRoot"), options.runTimeout(), options.memoryLimitBytes());
        this.flushBytes = LastLevelCache.flushBytes();
    }

    /** Runs in {@code <java.io.tmpdir>/relayfarm-measure-<user>}. */
    public SandboxedRunner(CCompiler compiler, MeasureOptions options) {
        this(compiler, options, Path.of(System.getProperty("java.io.tmpdir"), "relayfarm-measure-" + System.getProperty("user.name", "user")));
    }

    /**
     * A runner for {@code target} on this machine: its compiler ({@link CCompiler#forTarget}). Empty when no compiler
     * is installed, or when the target is a cross target (its programs cannot run here; a hardware agent of that
     * device class measures them).
     */
    public static Optional<SandboxedRunner> forTarget(Target target, MeasureOptions options) {
        if (target.isCross()) return Optional.empty();
        return CCompiler.forTarget(target).map(c -> new SandboxedRunner(c, options));
    }

    public MeasureOptions options() {
        return options;
    }

    /** The candidates' measurements, in order; the batch's baseline is {@link #measureWithBaseline}'s. */
    @Override
    public List<Measurement> measure(TuningTask task, List<ScheduleConfig> configs) {
        return measureWithBaseline(task, configs).results();
    }

    /**
     * {@code configs} of {@code task} against its default config, measured in the same batch. Lowering happens on the
     * calling thread (milliseconds per config, and a {@link dev.relayfarm.kernel.lower.LoweringObserver} bound there
     * sees it); only the C builds run in parallel.
     */
    @Override
    public MeasuredBatch measureWithBaseline(TuningTask task, List<ScheduleConfig> configs) {
        Item reference = lowered(task, task.defaultConfig());
        List<Item> items = new ArrayList<>();
        for (ScheduleConfig c : configs) items.add(c.equals(task.defaultConfig()) ? reference : lowered(task, c));
        return measureBatch(reference, items);
    }

    /**
     * Built candidates against {@code reference} (the hardware agent's entry, and the tests' for deliberately broken
     * kernels): their outputs are checked against the reference's, which must have the same signature. A candidate
     * equal to the reference gets the reference's measurement.
     */
    public MeasuredBatch measureCandidates(Candidate reference, List<Candidate> candidates) {
        Item ref = new Item(reference.workloadKey(), reference.config(), new Build.Source(reference));
        List<Item> items = new ArrayList<>();
        for (Candidate c : candidates) {
            if (!c.signature().equals(reference.signature())) {
                throw new IllegalArgumentException("candidate " + c.config() + " has signature " + c.signature() + ", its reference " + reference.signature());
            }
            items.add(c.equals(reference) ? ref : new Item(c.workloadKey(), c.config(), new Build.Source(c)));
        }
        return measureBatch(ref, items);
    }

    /** One measurement to make: what it is recorded under, and how far its build got. */
    private record Item(String workloadKey, ScheduleConfig config, Build build) {}

    /** A candidate on its way to a program: lowered, compiled, or stopped with the reason. */
    private sealed interface Build {
        /** Lowered and emitted, not compiled yet. */
        record Source(Candidate candidate) implements Build {}

        record Program(Candidate candidate, Path path) implements Build {}

        record Failed(Measurement.Failure failure) implements Build {}
    }

    private static Item lowered(TuningTask task, ScheduleConfig config) {
        try {
            return new Item(task.key(), config, new Build.Source(Candidate.lower(task, config)));
        } catch (RuntimeException e) {
            // the template refused the config (InvalidConfigException), or lowering or emitting failed on it
            return new Item(task.key(), config,
                    new Build.Failed(new Measurement.Failure(MeasureError.COMPILE_ERROR, "lowering: " + e.getClass().getSimpleName() + ": " + e.getMessage())));
        }
    }

    /**
     * Builds, then runs the reference, then each item in order ({@code items} may hold {@code reference} itself: it is
     * not built or run again).
     */
    private MeasuredBatch measureBatch(Item reference, List<Item> items) {
        List<Item> distinct = new ArrayList<>();
        distinct.add(reference);
        for (Item i : items) if (i != reference) distinct.add(i);
        Map<Item, Build> built = buildAll(distinct);
        try {
            HOST_RUNS.lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancellationException("measurement interrupted while waiting for another batch's runs");
        }
        try {
            return runAll(reference, items, built);
        } finally {
            HOST_RUNS.unlock();
        }
    }

    private MeasuredBatch runAll(Item reference, List<Item> items, Map<Item, Build> built) {
        Ran ref = run(built.get(reference), Optional.empty());
        Measurement baseline = new Measurement(reference.workloadKey(), reference.config(), ref.outcome());
        if (!baseline.ok()) throw new BaselineFailedException(baseline);
        List<Measurement> results = new ArrayList<>();
        for (Item i : items) {
            Measurement.Outcome o = i == reference ? baseline.outcome() : run(built.get(i), Optional.of(ref.outputs())).outcome();
            results.add(new Measurement(i.workloadKey(), i.config(), o));
        }
        return new MeasuredBatch(baseline, results);
    }

    /** Each item's program (or failure), compiled {@link MeasureOptions#buildParallelism} at a time. */
    private Map<Item, Build> buildAll(List<Item> items) {
        Map<Item, Build> out = new IdentityHashMap<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(Math.min(options.buildParallelism(), items.size()), r -> {
            Thread t = new Thread(r, "relayfarm-measure-build");
            t.setDaemon(true);
            return t;
        })) {
            Map<Item, Future<Build>> futures = new IdentityHashMap<>();
            for (Item i : items) futures.put(i, pool.submit(() -> compile(i.build())));
            try {
                for (Item i : items) out.put(i, futures.get(i).get());
            } catch (InterruptedException e) {
                pool.shutdownNow(); // interrupts the compilers' threads: ChildProcess kills their process groups
                Thread.currentThread().interrupt();
                throw new CancellationException("measurement interrupted while building");
            } catch (ExecutionException e) {
                pool.shutdownNow();
                if (e.getCause() instanceof RuntimeException re) throw re;
                throw new IllegalStateException(e.getCause());
            }
        }
        return out;
    }

    private Build compile(Build b) {
        if (!(b instanceof Build.Source(Candidate c))) return b;
        try {
            return new Build.Program(c, compiler.compileExecutable(MeasurementDriver.program(c.kernelSource(), c.signature())));
        } catch (CompileException | IllegalArgumentException e) {
            return new Build.Failed(new Measurement.Failure(MeasureError.COMPILE_ERROR, tail(e.getMessage())));
        }
    }

    /** What running one build gave: the outcome, and the outputs it computed (empty unless it ran to the end). */
    private record Ran(Measurement.Outcome outcome, List<NDArray> outputs) {
        Ran(Measurement.Outcome failure) {
            this(failure, List.of());
        }
    }

    /**
     * Runs one build; {@code expected} the reference's outputs, empty when this is the reference itself (whose outputs
     * the candidates are then checked against).
     */
    private Ran run(Build build, Optional<List<NDArray>> expected) {
        return switch (build) {
            case Build.Failed f -> new Ran(f.failure());
            case Build.Program prog -> run(prog, expected);
            case Build.Source src -> throw new IllegalStateException("not compiled: " + src.candidate().config());
        };
    }

    private Ran run(Build.Program prog, Optional<List<NDArray>> expected) {
        Sandbox.Run run;
        try {
            run = sandbox.run(prog.path(), outputs -> MeasurementDriver.arguments(outputs.toString(), options, flushBytes), OUTPUTS_FILE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancellationException("measurement interrupted while running " + prog.candidate().config());
        }
        return switch (run) {
            case Sandbox.Run.TimedOut t -> new Ran(new Measurement.Failure(MeasureError.TIMEOUT,
                    "ran longer than " + ChildProcess.seconds(t.limit()) + " and was killed with its process group" + logSuffix(t.log())));
            case Sandbox.Run.Exited x when x.exitCode() != 0 -> new Ran(new Measurement.Failure(MeasureError.RUNTIME_ERROR, exitReason(x.exitCode()) + logSuffix(x.log())));
            case Sandbox.Run.Exited x -> checked(prog, x, expected);
        };
    }

    /** A run that exited 0: its outputs checked against the reference's (before its timings count), then its cost. */
    private Ran checked(Build.Program prog, Sandbox.Run.Exited x, Optional<List<NDArray>> expected) {
        if (x.file().isEmpty()) return new Ran(new Measurement.Failure(MeasureError.RUNTIME_ERROR, "exited 0 without writing its outputs" + logSuffix(x.log())));
        List<NDArray> actual;
        try {
            actual = OutputCheck.decode(prog.candidate().signature(), x.file().get());
        } catch (IllegalArgumentException e) {
            return new Ran(new Measurement.Failure(MeasureError.RUNTIME_ERROR, e.getMessage()));
        }
        if (expected.isPresent()) {
            Optional<String> mismatch = OutputCheck.compare(prog.candidate().signature(), actual, expected.get());
            if (mismatch.isPresent()) {
                return new Ran(new Measurement.Failure(MeasureError.WRONG_ANSWER, mismatch.get() + " (against the default config, input seed " + options.seed() + ")"));
            }
        }
        Optional<RepeatTimings> timings = RepeatTimings.parse(x.log(), options.repeat());
        if (timings.isEmpty()) return new Ran(new Measurement.Failure(MeasureError.RUNTIME_ERROR, "exited 0 without a complete timing report" + logSuffix(x.log())));
        return new Ran(timings.get().cost(), actual);
    }

    private String exitReason(int code) {
        return switch (code) {
            case MeasurementDriver.EXIT_KERNEL_FAILED -> "the kernel returned an error (exit " + code + ")";
            case MeasurementDriver.EXIT_NO_MEMORY -> "out of memory under the " + (options.memoryLimitBytes() >> 20) + " MiB limit (exit " + code + ")";
            case MeasurementDriver.EXIT_IO -> "could not write its outputs (exit " + code + ")";
            case MeasurementDriver.EXIT_USAGE -> "the measurement program refused its arguments (exit " + code + ")";
            default -> code > 128 && code < 128 + 65 ? "killed by signal " + (code - 128) + signalName(code - 128) : "exit " + code;
        };
    }

    private static String signalName(int signal) {
        return switch (signal) {
            case 4 -> " (SIGILL: an instruction this CPU lacks?)";
            case 6 -> " (SIGABRT)";
            case 7 -> " (SIGBUS: a misaligned or out-of-bounds access)";
            case 8 -> " (SIGFPE: an integer division by zero?)";
            case 9 -> " (SIGKILL: the OOM killer?)";
            case 11 -> " (SIGSEGV: an out-of-bounds access or a stack overflow)";
            default -> "";
        };
    }

    private static String logSuffix(String log) {
        String t = log.strip();
        return t.isEmpty() ? "" : "; output: " + tail(t);
    }

    private static String tail(String s) {
        if (s == null) return "";
        return s.length() <= DETAIL_CHARS ? s : "..." + s.substring(s.length() - DETAIL_CHARS);
    }

    /** The tolerance a candidate's outputs are held to, for reports. */
    public static String toleranceRule() {
        return "|actual - expected| <= " + Tolerance.ONNX_DEFAULT.atol() + " + " + OutputCheck.ATOL_SCALE + " * max|expected| + " + OutputCheck.RTOL + " * |expected|";
    }
}
