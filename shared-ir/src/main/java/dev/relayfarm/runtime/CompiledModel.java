package dev.relayfarm.runtime;

import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.interp.Npy;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A compiled artifact loaded with the Foreign Function & Memory API: lib.so's graph executor
 * ({@code relayfarm_create/run/destroy}, see compile/EntryPointEmitter) run on
 * {@link NDArray}s. Inputs are checked against manifest.json (count, dtype, shape: errors name the
 * input), copied into 64-byte aligned native buffers, the graph runs, outputs come back as fresh
 * arrays. One model runs one call at a time ({@code run} is synchronized); load the artifact twice
 * for concurrent runs. {@link #profile} is a run timed per kernel by the executor ({@code relayfarm_profile}).
 * {@link #close()} frees the native model and unloads the library.
 */
public final class CompiledModel implements AutoCloseable {
    private static final Linker LINKER = Linker.nativeLinker();

    private final Path dir;
    private final List<TensorSpec> inputs;
    private final List<TensorSpec> outputs;
    private final String contentHash;
    private final Arena arena;
    private final MethodHandle run;
    private final MethodHandle setThreads;
    private final MethodHandle destroy;
    private final MethodHandle lastError;
    /** {@code relayfarm_profile}; null for artifacts compiled before it existed. */
    private final MethodHandle profile;
    /** Kernel symbols in lib.so's kernel-table order ({@code relayfarm_kernel_name}); empty with {@link #profile} null. */
    private final List<String> kernelNames;
    private MemorySegment model;

    private CompiledModel(Path dir, List<TensorSpec> inputs, List<TensorSpec> outputs, String contentHash, Arena arena, SymbolLookup lib) {
        this.dir = dir;
        this.inputs = inputs;
        this.outputs = outputs;
        this.contentHash = contentHash;
        this.arena = arena;
        this.run = handle(lib, "relayfarm_run", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        this.setThreads = handle(lib, "relayfarm_set_num_threads", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        this.destroy = handle(lib, "relayfarm_destroy", FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
        this.lastError = handle(lib, "relayfarm_last_error", FunctionDescriptor.of(ValueLayout.ADDRESS));
        this.profile = lib.find("relayfarm_profile").map(fn -> LINKER.downcallHandle(fn, FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS))).orElse(null);
        this.kernelNames = profile == null ? List.of() : kernelNames(lib);
    }

    private List<String> kernelNames(SymbolLookup lib) {
        MethodHandle count = handle(lib, "relayfarm_num_kernels", FunctionDescriptor.of(ValueLayout.JAVA_INT));
        MethodHandle name = handle(lib, "relayfarm_kernel_name", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        try {
            int n = (int) count.invokeExact();
            List<String> names = new ArrayList<>(n);
            for (int i = 0; i < n; i++) names.add(((MemorySegment) name.invokeExact(i)).reinterpret(4096).getString(0));
            return List.copyOf(names);
        } catch (Throwable t) {
            throw new ArtifactException(dir.resolve("lib.so") + ": cannot read its kernel names: " + t, t);
        }
    }

    private MethodHandle handle(SymbolLookup lib, String name, FunctionDescriptor fd) {
        MemorySegment fn = lib.find(name).orElseThrow(() -> new ArtifactException(dir.resolve("lib.so") + " has no symbol " + name + " (not a RelayFarm artifact?)"));
        return LINKER.downcallHandle(fn, fd);
    }

    /** Loads the artifact in {@code dir} (manifest.json, lib.so, params.bin). */
    public static CompiledModel load(Path dir) {
        Manifest manifest = Manifest.read(dir);
        if (manifest.lib() == null) throw new ArtifactException(dir + " has no lib.so (" + (manifest.note() != null ? manifest.note() : "sources only") + ")");
        Path so = dir.resolve("lib.so").toAbsolutePath();
        if (!Files.isRegularFile(so)) throw new ArtifactException("missing " + so);
        Arena arena = Arena.ofShared();
        try {
            SymbolLookup lib = SymbolLookup.libraryLookup(so, arena);
            CompiledModel m = new CompiledModel(dir, specs(manifest.inputs()), specs(manifest.outputs()), manifest.contentHash(), arena, lib);
            MethodHandle create = m.handle(lib, "relayfarm_create", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
            try (Arena tmp = Arena.ofConfined()) {
                m.model = (MemorySegment) create.invokeExact(tmp.allocateFrom(dir.toAbsolutePath().toString()));
            }
            if (m.model.address() == 0) throw new ArtifactException("cannot load " + dir + ": " + m.lastError());
            return m;
        } catch (ArtifactException | IllegalArgumentException e) {
            arena.close();
            throw e instanceof ArtifactException a ? a : new ArtifactException("cannot load " + so + ": " + e.getMessage(), e);
        } catch (Throwable t) {
            arena.close();
            throw new ArtifactException("cannot load " + dir + ": " + t, t);
        }
    }

    private static List<TensorSpec> specs(List<Manifest.Tensor> tensors) {
        return tensors.stream().map(Manifest.Tensor::spec).toList();
    }

    public List<TensorSpec> inputs() {
        return inputs;
    }

    public List<TensorSpec> outputs() {
        return outputs;
    }

    public String contentHash() {
        return contentHash;
    }

    /** Threads for the following runs (0: all online CPUs). */
    public synchronized void setNumThreads(int threads) {
        if (threads < 0) throw new IllegalArgumentException("thread count must be >= 0, got " + threads);
        try {
            int rc = (int) setThreads.invokeExact(live(), threads);
            if (rc != 0) throw new IllegalStateException(lastError());
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("relayfarm_set_num_threads failed", t);
        }
    }

    /** Runs the model; inputs in manifest order. */
    public synchronized List<NDArray> run(List<NDArray> args) {
        return call(args, false).outputs();
    }

    /**
     * One run, timed by the executor ({@code relayfarm_profile}): each kernel's seconds summed over its calls in this run,
     * by symbol in lib.so's kernel order (the manifest's "kernels" order), the executor's copies, and the wall time of the
     * whole native call. Reading the clock around every step costs a little, so time {@link #run} for latency.
     *
     * @param outputs        what the run returned, as {@link #run} would
     * @param kernelSeconds  per kernel symbol, every kernel listed (0 for one this run did not call)
     * @param copySeconds    the executor's copies between buffers
     * @param totalSeconds   the native call from entry to return (at least the sum of the others)
     */
    public record KernelProfile(List<NDArray> outputs, Map<String, Double> kernelSeconds, double copySeconds, double totalSeconds) {
        public KernelProfile {
            outputs = List.copyOf(outputs);
            kernelSeconds = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(kernelSeconds));
        }

        /** The kernels' seconds summed. */
        public double kernelSecondsTotal() {
            return kernelSeconds.values().stream().mapToDouble(Double::doubleValue).sum();
        }
    }

    /** Whether lib.so has {@code relayfarm_profile} (artifacts compiled before it existed do not). */
    public boolean canProfile() {
        return profile != null;
    }

    /** Runs the model once with each step timed (see {@link KernelProfile}); inputs in manifest order. */
    public synchronized KernelProfile profile(List<NDArray> args) {
        if (profile == null) {
            throw new ArtifactException(dir.resolve("lib.so") + " has no relayfarm_profile: the artifact was compiled before profiling existed; compile it again");
        }
        return call(args, true);
    }

    /** One native call: {@code relayfarm_run}, or {@code relayfarm_profile} when {@code timed} (zeroed buffers for it to add into). */
    private KernelProfile call(List<NDArray> args, boolean timed) {
        HostBuffers.checkInputs("model " + dir, "", inputs, args);
        MemorySegment m = live();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment in = call.allocate(ValueLayout.ADDRESS, Math.max(1, inputs.size()));
            MemorySegment out = call.allocate(ValueLayout.ADDRESS, Math.max(1, outputs.size()));
            for (int i = 0; i < inputs.size(); i++) in.setAtIndex(ValueLayout.ADDRESS, i, HostBuffers.copyIn(call, inputs.get(i), args.get(i)));
            List<MemorySegment> outSegs = new ArrayList<>();
            for (int i = 0; i < outputs.size(); i++) {
                MemorySegment seg = HostBuffers.allocate(call, outputs.get(i));
                outSegs.add(seg);
                out.setAtIndex(ValueLayout.ADDRESS, i, seg);
            }
            // Arena.allocate zeroes what it returns: the executor adds into these
            MemorySegment kernels = timed ? call.allocate(ValueLayout.JAVA_DOUBLE, Math.max(1, kernelNames.size())) : null;
            MemorySegment copies = timed ? call.allocate(ValueLayout.JAVA_DOUBLE) : null;
            int rc;
            long start, end;
            try {
                start = System.nanoTime();
                rc = kernels == null ? (int) run.invokeExact(m, in, out) : (int) profile.invokeExact(m, in, out, kernels, copies);
                end = System.nanoTime();
            } catch (Throwable t) {
                throw new IllegalStateException((kernels == null ? "relayfarm_run" : "relayfarm_profile") + " failed for " + dir, t);
            }
            if (rc != 0) throw new IllegalStateException("model " + dir + " failed (code " + rc + "): " + lastError());
            List<NDArray> results = new ArrayList<>();
            for (int i = 0; i < outputs.size(); i++) results.add(HostBuffers.copyOut(outSegs.get(i), outputs.get(i)));
            if (kernels == null) return new KernelProfile(results, Map.of(), 0, (end - start) / 1e9);
            Map<String, Double> byName = new LinkedHashMap<>();
            for (int k = 0; k < kernelNames.size(); k++) byName.merge(kernelNames.get(k), kernels.getAtIndex(ValueLayout.JAVA_DOUBLE, k), Double::sum);
            return new KernelProfile(results, byName, copies.get(ValueLayout.JAVA_DOUBLE, 0), (end - start) / 1e9);
        }
    }

    /** Runs on .npy inputs (manifest order) and writes each output to {@code outDir/output_N.npy}; returns the outputs. */
    public List<NDArray> runNpy(List<Path> inputFiles, Path outDir) throws IOException {
        List<NDArray> args = new ArrayList<>();
        for (Path p : inputFiles) args.add(Npy.read(p));
        List<NDArray> results = run(args);
        if (outDir != null) {
            Files.createDirectories(outDir);
            for (int i = 0; i < results.size(); i++) Npy.write(outDir.resolve("output_" + i + ".npy"), results.get(i));
        }
        return results;
    }

    private MemorySegment live() {
        if (model == null) throw new IllegalStateException("model " + dir + " is closed");
        return model;
    }

    private String lastError() {
        try {
            MemorySegment s = (MemorySegment) lastError.invokeExact();
            return s.reinterpret(1024).getString(0);
        } catch (Throwable t) {
            return "(no message)";
        }
    }

    @Override
    public synchronized void close() {
        if (model == null) return;
        try {
            destroy.invokeExact(model);
        } catch (Throwable t) {
            throw new IllegalStateException("relayfarm_destroy failed", t);
        } finally {
            model = null;
            arena.close();
        }
    }
}
