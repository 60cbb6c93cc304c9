package dev.relayfarm.runtime;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A loaded kernel library ({@code .so}) and its kernels, through the Foreign Function & Memory API
 * (no JNI). Every kernel has the C ABI {@code int32_t name(void* const* args)} of
 * the kernel C emitter (kernel/codegen/CEmitter). Closing the library unloads it; kernels must not be
 * called afterwards. Needs {@code --enable-native-access=ALL-UNNAMED} to run without a warning.
 */
public final class KernelLibrary implements AutoCloseable {
    static final FunctionDescriptor KERNEL_ABI = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS);

    private final Path path;
    private final Arena arena;
    private final SymbolLookup lookup;
    private final Map<String, NativeKernel> kernels = new LinkedHashMap<>();

    private KernelLibrary(Path path, Arena arena, SymbolLookup lookup) {
        this.path = path;
        this.arena = arena;
        this.lookup = lookup;
    }

    /** Compiles {@code module} with {@code compiler} (or finds it in the compiler's cache) and loads it. */
    public static KernelLibrary build(CModule module, CCompiler compiler) {
        return load(compiler.compile(module.source()), module.signatures());
    }

    /** Loads {@code so} and binds each signature to its symbol; a missing symbol is an error naming it. */
    public static KernelLibrary load(Path so, List<KernelSignature> signatures) {
        // Unloading is safe: the library's destructor stops its thread pool (ParallelRuntime) first.
        Arena arena = Arena.ofShared();
        try {
            KernelLibrary lib = new KernelLibrary(so, arena, SymbolLookup.libraryLookup(so, arena));
            Linker linker = Linker.nativeLinker();
            for (KernelSignature sig : signatures) {
                MemorySegment fn = lib.lookup.find(sig.name())
                        .orElseThrow(() -> new IllegalArgumentException("kernel library " + so + " has no symbol " + sig.name()));
                MethodHandle handle = linker.downcallHandle(fn, KERNEL_ABI);
                lib.kernels.put(sig.name(), new NativeKernel(sig, fn, handle));
            }
            return lib;
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    public NativeKernel kernel(String name) {
        NativeKernel k = kernels.get(name);
        if (k == null) throw new IllegalArgumentException("no kernel " + name + " in " + path + " (kernels: " + kernels.keySet() + ")");
        return k;
    }

    public Map<String, NativeKernel> kernels() {
        return java.util.Collections.unmodifiableMap(kernels);
    }

    /**
     * A queue of this library's kernel calls, run by one native call ({@link KernelBatch}) with room for {@code calls}
     * calls of {@code pointers} buffers in all; empty for a library built before the batch entry existed.
     */
    public Optional<KernelBatch> batch(int calls, long pointers) {
        return lookup.find("rf_run_batch").map(fn -> new KernelBatch(fn, calls, pointers));
    }

    /** Threads for parallel loops of this library's kernels (0: all online CPUs); its pool's {@code rf_set_num_threads}. */
    public void setNumThreads(int threads) {
        if (threads < 0) throw new IllegalArgumentException("thread count must be >= 0, got " + threads);
        MemorySegment fn = lookup.find("rf_set_num_threads")
                .orElseThrow(() -> new IllegalStateException("kernel library " + path + " has no rf_set_num_threads (not built by CEmitter?)"));
        MethodHandle h = Linker.nativeLinker().downcallHandle(fn, FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));
        try {
            h.invokeExact(threads);
        } catch (Throwable t) {
            throw new IllegalStateException("rf_set_num_threads failed", t);
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
