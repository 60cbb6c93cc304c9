package dev.relayfarm.cli;

import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.diagnostic.Diagnostic;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.InterpreterOptions;
import dev.relayfarm.interp.Npy;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.Dim;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.pipeline.ModelInputException;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.runtime.HostBuffers;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.TypeInference;
import dev.relayfarm.vm.VirtualMachine;
import dev.relayfarm.vm.VmArtifact;
import dev.relayfarm.vm.VmException;
import dev.relayfarm.vm.VmManifest;
import dev.relayfarm.vm.VmObject;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code relayc run FILE|ARTIFACT_DIR [--arg NAME=FILE.npy ...] [--random] [--repeat N] [--out DIR]}: type-checks a Relay
 * text file and evaluates its {@code @main} with the reference interpreter, or runs a compiled artifact
 * (a directory from {@code relayc compile}) through the native runtime (a VM artifact, {@code "executor": "vm"}, on the VM); prints each output's type and first values, and writes
 * the outputs as {@code output_0.npy, output_1.npy, ...} (a tuple result gives one file per tensor,
 * depth-first). Exit code 0 on success, 1 for a user error (bad file, missing or mismatched input,
 * run-time error), each reported as one message naming the problem.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Evaluate @main of a Relay text file with the reference interpreter, or run a compiled artifact",
                "(a directory made by 'relayc compile') natively. Inputs come from .npy files (--arg) or, with --random,",
                "seeded uniform [-0.5, 0.5) values: the interpreter and the artifact then see the same inputs."})
public final class RunCommand implements Callable<Integer> {
    /** How many leading values of each output are printed. */
    private static final int PREVIEW = 8;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "Relay text file defining @main, or an artifact directory.")
    Path file;

    @Option(names = "--random", description = "inputs not given by --arg get seeded pseudo-random values in [-0.5, 0.5) (integers: 0..7)")
    boolean random;

    @Option(names = "--threads", defaultValue = "0", description = "artifact only: threads (default 0: all online CPUs)")
    int threads;

    @Option(names = "--repeat", paramLabel = "N", defaultValue = "0",
            description = "artifact only: time N more calls after the first (which also starts the worker threads and touches the arena) and print their median")
    int repeat;

    @Option(names = "--arg", paramLabel = "NAME=FILE.npy", description = "Value of @main parameter %%NAME, read from a .npy file (repeatable).")
    List<String> args = new ArrayList<>();

    @Option(names = "--out", paramLabel = "DIR", description = "Directory to write output_<i>.npy into (created if absent).")
    Path outDir;

    // Interpreter budgets (InterpreterOptions): a runaway program stops with the budget named.
    @Option(names = "--max-steps", paramLabel = "N", defaultValue = "" + InterpreterOptions.DEFAULT_MAX_STEPS,
            description = "interpreter: stop after N machine steps (default ${DEFAULT-VALUE}; endless loops and tail recursion)")
    long maxSteps;

    @Option(names = "--timeout", paramLabel = "DURATION",
            description = "interpreter: stop after this wall-clock time, e.g. 30s, 2m, 500ms (default: none)")
    String timeout;

    @Option(names = "--max-stack", paramLabel = "N", defaultValue = "" + InterpreterOptions.DEFAULT_MAX_STACK_DEPTH,
            description = "interpreter: stop past N continuation frames (default ${DEFAULT-VALUE}; endless non-tail recursion)")
    int maxStack;

    @Option(names = "--max-tensor", paramLabel = "SIZE", defaultValue = "1g",
            description = "interpreter: refuse an operator result larger than SIZE bytes, e.g. 512m, 2g (default ${DEFAULT-VALUE})")
    String maxTensor;


    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        // User errors (bad inputs, syntax, types, run-time errors, budgets) are reported by CliErrors.
        {
            List<NDArray> outputs = new ArrayList<>();
            List<String> others = new ArrayList<>();
            if (Files.isDirectory(file) && Files.isRegularFile(file.resolve("manifest.json")) && VmManifest.EXECUTOR.equals(VmManifest.executorOf(file))) {
                runVmArtifact(out, outputs, others);
            } else if (Files.isDirectory(file)) {
                outputs.addAll(runArtifact(out));
            } else {
                IRModule module = typeCheck(parse());
                Function main = module.main().orElseThrow(() -> new ModelInputException(file + ": no @main function to run"));
                List<Value> inputs = readInputs("@main", main.params().stream().map(p -> new Input(p.name(),
                        p.hasAnnotation() && p.annotation() instanceof TensorType t ? t : null, p.hasAnnotation() ? p.annotation().toString() : "no type annotation")).toList())
                        .stream().map(a -> (Value) Value.tensor(a)).toList();
                collect(new Interpreter(module, budgets()).call("main", inputs), outputs, others);
            }
            for (int i = 0; i < outputs.size(); i++) out.println("output_" + i + ": " + preview(outputs.get(i)));
            for (String o : others) out.println("non-tensor output: " + o);
            if (outDir != null) write(outputs, out);
            out.flush();
            return 0;
        }
    }

    private IRModule parse() {
        return Stages.importModel(ModelFiles.read(file), Map.of());
    }

    /** The budgets from the options, each checked with the option's name in the message. */
    InterpreterOptions budgets() {
        if (maxSteps < 1) throw new ModelInputException("--max-steps must be at least 1, got " + maxSteps);
        if (maxStack < 1) throw new ModelInputException("--max-stack must be at least 1, got " + maxStack);
        return new InterpreterOptions(maxSteps, timeout == null ? null : duration("--timeout", timeout), maxStack, size("--max-tensor", maxTensor));
    }

    /** {@code 30s}, {@code 2m}, {@code 500ms}, {@code 1h}, or an ISO-8601 duration ({@code PT30S}). */
    static java.time.Duration duration(String option, String text) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)(ms|s|m|h)").matcher(text.trim());
        try {
            java.time.Duration d;
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                d = switch (m.group(2)) {
                    case "ms" -> java.time.Duration.ofMillis(n);
                    case "s" -> java.time.Duration.ofSeconds(n);
                    case "m" -> java.time.Duration.ofMinutes(n);
                    default -> java.time.Duration.ofHours(n);
                };
            } else {
                d = java.time.Duration.parse(text.trim());
            }
            if (d.isZero() || d.isNegative()) throw new ModelInputException(option + " must be positive, got '" + text + "'");
            return d;
        } catch (java.time.format.DateTimeParseException | ArithmeticException e) {
            throw new ModelInputException(option + " expects a duration like 30s, 2m or 500ms, got '" + text + "'");
        }
    }

    /** {@code 1024}, {@code 64k}, {@code 512m}, {@code 2g} (binary units). */
    static long size(String option, String text) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)([kmg]?)b?", java.util.regex.Pattern.CASE_INSENSITIVE).matcher(text.trim());
        if (!m.matches()) throw new ModelInputException(option + " expects a size like 512m or 2g, got '" + text + "'");
        try {
            long n = Long.parseLong(m.group(1));
            int shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
                case "k" -> 10;
                case "m" -> 20;
                case "g" -> 30;
                default -> 0;
            };
            if (n < 1 || n > (Long.MAX_VALUE >> shift)) throw new ModelInputException(option + " must be between 1 byte and 8 EiB, got '" + text + "'");
            return n << shift;
        } catch (NumberFormatException e) {
            throw new ModelInputException(option + " is too large: '" + text + "'");
        }
    }

    /**
     * Type errors are reported before anything runs, with their positions; the checked module (whose
     * signatures inference completed) is the one evaluated. Warnings (a non-exhaustive match) go to
     * stderr and do not stop the run.
     */
    private IRModule typeCheck(IRModule module) {
        InferResult checked = TypeInference.infer(module);
        PrintWriter err = spec.commandLine().getErr();
        for (Diagnostic w : checked.warnings()) err.println("warning: " + w);
        return checked.module();
    }

    /** A model input: its name, its static tensor type when known (for --random), and how to describe it. */
    private record Input(String name, TensorType type, String description) {}

    /** Runs the artifact in {@code file}; its inputs are named by its manifest. */
    private List<NDArray> runArtifact(PrintWriter out) {
        if (!Files.isRegularFile(file.resolve("manifest.json"))) throw new ModelInputException(file + " is a directory but not an artifact (no manifest.json)");
        try (CompiledModel model = CompiledModel.load(file)) {
            List<NDArray> inputs = readInputs(file.toString(), model.inputs().stream().map(s -> new Input(s.name(),
                    new TensorType(s.shape().stream().map(d -> (Dim) Dim.of(d)).toList(), s.dtype()), s.dtype() + " " + s.shape())).toList());
            checkTiming();
            model.setNumThreads(threads);
            long t0 = System.nanoTime();
            List<NDArray> outputs = model.run(inputs);
            String timing = timing("ran " + file + " natively", t0, () -> model.run(inputs));
            out.println(timing);
            return outputs;
        } catch (IllegalArgumentException e) {
            // a bad input array or option value: the user's, reported as an input error unless it already is a compile error
            if (e instanceof CompileError) throw e;
            throw new ModelInputException(e.getMessage());
        }
    }

    /**
     * Runs a VM artifact ({@code "executor": "vm"}): its bytecode on the Java VM, its kernels from lib.so. Inputs are
     * named by its manifest; tensors of the result come out depth-first (the fields of tuples and other ADT values in
     * order), closures are only described.
     */
    private void runVmArtifact(PrintWriter out, List<NDArray> outputs, List<String> others) {
        checkTiming();
        VmManifest manifest = VmManifest.read(file);
        try (VirtualMachine vm = VmArtifact.load(file, manifest)) {
            List<NDArray> inputs = readInputs(file.toString(), manifest.inputs().stream().map(s -> new Input(s.name(),
                    s.shape() == null ? null : new TensorType(s.shape().stream().map(d -> (Dim) Dim.of(d)).toList(), dev.relayfarm.ir.DType.parse(s.dtype())),
                    s.shape() == null ? s.dtype() : s.dtype() + " " + s.shape())).toList());
            if (manifest.inputs().stream().allMatch(s -> s.shape() != null)) {
                // the bytecode does not check its inputs' types: a wrong shape would reach a kernel
                HostBuffers.checkInputs("model " + file, "", manifest.inputs().stream().map(Manifest.Tensor::spec).toList(), inputs);
            }
            vm.setNumThreads(threads);
            long t0 = System.nanoTime();
            VmObject result = vm.run("main", inputs);
            out.println(timing("ran " + file + " on the VM", t0, () -> vm.run("main", inputs)));
            collectVm(result, outputs, others);
        } catch (VmException e) {
            throw new ModelInputException(e.getMessage());
        } catch (IllegalArgumentException e) {
            if (e instanceof CompileError) throw e;
            throw new ModelInputException(e.getMessage());
        }
    }

    private void checkTiming() {
        if (threads < 0) throw new ModelInputException("--threads must be >= 0, got " + threads);
        if (repeat < 0) throw new ModelInputException("--repeat must be >= 0, got " + repeat);
    }

    /** "{@code what}: first call X ms[, then median Y ms over N calls]", the first call having started at {@code t0}. */
    private String timing(String what, long t0, Runnable again) {
        String timing = String.format(Locale.ROOT, "%s: first call %.3f ms", what, (System.nanoTime() - t0) / 1e6);
        if (repeat > 0) {
            double[] times = new double[repeat];
            for (int i = 0; i < times.length; i++) {
                long s = System.nanoTime();
                again.run();
                times[i] = (System.nanoTime() - s) / 1e6;
            }
            Arrays.sort(times);
            timing += String.format(Locale.ROOT, ", then median %.3f ms over %d calls", times[times.length / 2], times.length);
        }
        return timing;
    }

    /** Tensors depth-first, iteratively (a returned list of 100,000 elements is a value nested that deep). */
    private static void collectVm(VmObject v, List<NDArray> tensors, List<String> others) {
        ArrayDeque<VmObject> todo = new ArrayDeque<>();
        todo.push(v);
        while (!todo.isEmpty()) {
            switch (todo.pop()) {
                case VmObject.Tensor t -> tensors.add(t.toNDArray());
                case VmObject.Adt a -> {
                    for (int i = a.fields().size() - 1; i >= 0; i--) todo.push(a.fields().get(i));
                }
                case VmObject.Closure c -> others.add(c.toString());
                case VmObject.Storage s -> others.add("storage");
                case VmObject.Ref r -> others.add("a reference"); // printed as a value it could hold a cycle
            }
        }
    }

    /** One array per input, in order, from the {@code --arg} files (or random with {@code --random}). */
    private List<NDArray> readInputs(String owner, List<Input> params) {
        Map<String, Path> given = ModelFiles.namedFiles("--arg", args);
        List<String> names = params.stream().map(Input::name).toList();
        for (String name : given.keySet()) {
            if (!names.contains(name)) throw new ModelInputException(owner + " has no parameter %" + name + " (its parameters: " + names.stream().map(n -> "%" + n).toList() + ")");
        }
        Random rng = new Random(42);
        List<NDArray> values = new ArrayList<>();
        for (Input p : params) {
            Path npy = given.get(p.name());
            if (npy == null && random && p.type() != null && p.type().isStatic()) {
                values.add(randomArray(p.type(), rng));
                continue;
            }
            if (npy == null) {
                throw new ModelInputException(owner + " needs --arg " + p.name() + "=FILE.npy (" + p.description() + ")"
                        + (random ? ": --random needs a static tensor type" : "; or --random"));
            }
            try {
                values.add(Npy.read(npy));
            } catch (IOException e) {
                throw new ModelInputException("cannot read --arg " + p.name() + "=" + npy + ": " + e);
            }
        }
        return values;
    }

    private static NDArray randomArray(TensorType t, Random rng) {
        NDArray a = NDArray.zeros(t.dtype(), t.staticShape());
        for (int i = 0; i < a.elementCount(); i++) {
            if (t.dtype().isFloat()) a.setDouble(i, rng.nextFloat() - 0.5f);
            else a.setLong(i, rng.nextInt(t.dtype().isBool() ? 2 : 8));
        }
        return a;
    }

    /** Tensors in depth-first order; anything else (closures, ADT values) is only described. */
    private static void collect(Value v, List<NDArray> tensors, List<String> others) {
        switch (v) {
            case TensorValue t -> tensors.add(t.data());
            case TupleValue t -> {
                for (Value f : t.fields()) collect(f, tensors, others);
            }
            default -> others.add(Value.describe(v));
        }
    }

    static String preview(NDArray a) {
        StringBuilder sb = new StringBuilder(Value.typeOf(a).toString()).append(" = [");
        int n = Math.min(a.elementCount(), PREVIEW);
        for (int i = 0; i < n; i++) {
            if (i > 0) sb.append(", ");
            sb.append(element(a, i));
        }
        if (a.elementCount() > n) sb.append(", ... (").append(a.elementCount()).append(" values)");
        return sb.append(']').toString();
    }

    private static String element(NDArray a, int i) {
        if (a.dtype().isBool()) return a.getBoolean(i) ? "True" : "False";
        if (!a.dtype().isFloat()) return a.dtype().code() == dev.relayfarm.ir.DType.Code.UINT && a.dtype().bits() == 64
                ? Long.toUnsignedString(a.getLong(i)) : Long.toString(a.getLong(i));
        double d = a.getDouble(i);
        // Shortest text that reads back to the same float32 value, not its widened double digits.
        return a.dtype().bits() == 64 ? Double.toString(d) : Float.toString((float) d);
    }

    private void write(List<NDArray> outputs, PrintWriter out) {
        try {
            Files.createDirectories(outDir);
            for (int i = 0; i < outputs.size(); i++) {
                Path f = outDir.resolve("output_" + i + ".npy");
                Npy.write(f, outputs.get(i));
                out.println("wrote " + f);
            }
        } catch (IOException e) {
            throw new ModelInputException("cannot write outputs to " + outDir + ": " + e);
        }
    }
}
