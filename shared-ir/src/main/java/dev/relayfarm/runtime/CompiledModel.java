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
import java.util.List;

/**
 * A compiled artifact loaded with the Foreign Function & Memory API: lib.so's graph executor
 * ({@code relayfarm_create/run/destroy}, see compile/EntryPointEmitter) run on
 * {@link NDArray}s. Inputs are checked against manifest.json (count, dtype, shape: errors name the
 * input), copied into 64-byte aligned native buffers, the graph runs, outputs come back as fresh
 * arrays. One model runs one call at a time ({@code run} is synchronized); load the artifact twice
 * for concurrent runs. {@link #close()} frees the native model and unloads the library.
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
            int rc;
            try {
                rc = (int) run.invokeExact(m, in, out);
            } catch (Throwable t) {
                throw new IllegalStateException("relayfarm_run failed for " + dir, t);
            }
            if (rc != 0) throw new IllegalStateException("model " + dir + " failed (code " + rc + "): " + lastError());
            List<NDArray> results = new ArrayList<>();
            for (int i = 0; i < outputs.size(); i++) results.add(HostBuffers.copyOut(outSegs.get(i), outputs.get(i)));
            return results;
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
