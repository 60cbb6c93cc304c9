package dev.relayfarm.kernel.codegen;

/**
 * The C allocator for buffers that live as long as a model or a measurement: parameters and the arena of an artifact,
 * the arguments of a candidate kernel under measurement (so a candidate is timed on the pages it will run on).
 *
 * <p>With 4 KiB pages the physical pages behind a buffer change with every process, and with them the L2 sets its
 * lines map to (the L2 is physically indexed: bits 12–16 of the address pick among 32 page colours), and a model that
 * streams its weights (alexnet's dense layers: 234 MB per run) takes a TLB miss every 4 KiB. A buffer of 64 KiB or
 * more (big enough to span page colours) is therefore placed on a 2 MiB boundary, rounded up to whole 2 MiB, and
 * advised to transparent huge pages: a huge page is physically contiguous, so every address bit that indexes the
 * caches is the same on every load, and one TLB entry covers what took 512. Measured (alexnet, a C harness, three
 * processes each, idle): one thread 21.2–21.6 ms best against 21.9–22.4 ms with small pages; two threads, no
 * difference beyond the noise. The advice is only advice: where THP is off, the pages stay small. Smaller buffers keep
 * 64-byte alignment. Kernels' per-call heap intermediates use {@code rf_alloc}, not this: rounding those up to huge
 * pages would fault 2 MiB in on every call.
 *
 * <p>{@code madvise} and {@code MADV_HUGEPAGE} are declared here rather than taken from {@code <sys/mman.h>}: the
 * generated sources define {@code _POSIX_C_SOURCE}, which hides both.
 */
public final class HugePages {
    private HugePages() {}

    /** Defines {@code static void* rf_pages_alloc(size_t bytes)} (free with {@code free}); needs {@code <stdlib.h>}. */
    public static final String C = """
            #ifdef __linux__
            int madvise(void* addr, size_t length, int advice);
            #define RF_MADV_HUGEPAGE 14
            #endif
            #define RF_HUGE_PAGE ((size_t) 2 << 20)
            static void* rf_pages_alloc(size_t bytes) {
                void* p = NULL;
                if (bytes < ((size_t) 64 << 10)) return posix_memalign(&p, 64, bytes ? bytes : 64) == 0 ? p : NULL;
                size_t rounded = (bytes + RF_HUGE_PAGE - 1) / RF_HUGE_PAGE * RF_HUGE_PAGE;
                if (posix_memalign(&p, RF_HUGE_PAGE, rounded) != 0) return NULL;
            #ifdef __linux__
                madvise(p, rounded, RF_MADV_HUGEPAGE);
            #endif
                return p;
            }
            """;
}
