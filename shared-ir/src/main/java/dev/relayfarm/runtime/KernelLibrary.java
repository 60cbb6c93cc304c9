package dev.relayfarm.runtime;

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
 * {@link dev.relayfarm.kernel.codegen.CEmitter}. Closing the library unloads it; kernels must not be
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

    /**
     * Whether an OpenMP runtime is pinned in memory for the life of the process. Kernel libraries
     * pull libgomp in as a dependency; if unloading the last kernel library also unloaded libgomp,
     * its idle worker threads would run unmapped code (a crash seen in practice). Pinning it once
     * makes closing a kernel library safe; where no runtime can be pinned, libraries are never
     * unloaded instead.
     */
    private static final boolean OPENMP_PINNED = pinOpenMp();

    /** Whether native libraries may be unloaded safely (see {@link #OPENMP_PINNED}); shared with {@link CompiledModel}. */
    static boolean openMpPinned() {
        return OPENMP_PINNED;
    }

    private static boolean pinOpenMp() {
        for (String name : List.of("libgomp.so.1", "libomp.so.5", "libomp.so")) {
            try {
                SymbolLookup.libraryLookup(name, Arena.global());
                return true;
            } catch (IllegalArgumentException notInstalled) {
                // try the next name
            }
        }
        return false;
    }

    /** Loads {@code so} and binds each signature to its symbol; a missing symbol is an error naming it. */
    public static KernelLibrary load(Path so, List<KernelSignature> signatures) {
        Arena arena = OPENMP_PINNED ? Arena.ofShared() : Arena.global();
        try {
            KernelLibrary lib = new KernelLibrary(so, arena, SymbolLookup.libraryLookup(so, arena));
            Linker linker = Linker.nativeLinker();
            for (KernelSignature sig : signatures) {
                MemorySegment fn = lib.lookup.find(sig.name())
                        .orElseThrow(() -> new IllegalArgumentException("kernel library " + so + " has no symbol " + sig.name()));
                MethodHandle handle = linker.downcallHandle(fn, KERNEL_ABI);
                lib.kernels.put(sig.name(), new NativeKernel(sig, handle));
            }
            return lib;
        } catch (RuntimeException e) {
            if (OPENMP_PINNED) arena.close();
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
     * Sets the OpenMP thread count for kernels of this library (libgomp's {@code omp_set_num_threads},
     * found through the library's own dependencies). A library none of whose kernels has a parallel loop
     * is not linked with OpenMP (the linker drops an unused libgomp); its kernels run on the calling
     * thread whatever the count, so there is nothing to set.
     */
    public void setNumThreads(int threads) {
        if (threads < 1) throw new IllegalArgumentException("thread count must be >= 1, got " + threads);
        Optional<MemorySegment> found = lookup.find("omp_set_num_threads");
        if (found.isEmpty()) return;
        MemorySegment fn = found.get();
        MethodHandle h = Linker.nativeLinker().downcallHandle(fn, FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));
        try {
            h.invokeExact(threads);
        } catch (Throwable t) {
            throw new IllegalStateException("omp_set_num_threads failed", t);
        }
    }

    @Override
    public void close() {
        if (arena.scope() != Arena.global().scope()) arena.close();
    }
}
