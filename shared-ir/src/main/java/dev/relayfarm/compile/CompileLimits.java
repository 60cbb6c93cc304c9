package dev.relayfarm.compile;

import dev.relayfarm.kernel.codegen.CCompiler;
import java.time.Duration;
import java.util.Objects;

/**
 * Bounds on what one codegen may cost, so that no model makes it run unbounded; a model over a bound fails
 * with an {@link ArtifactLimitException} naming the bound and its farm setting ({@code relayfarm.limits.*}).
 *
 * @param compileTimeout  wall clock for one C compiler run; the compiler and its children are killed after it
 *                        (default {@link CCompiler#DEFAULT_TIMEOUT}, 5 min)
 * @param maxArenaBytes   the planned intermediates' arena, which {@code relayfarm_create} allocates in one piece
 *                        (default 16 GiB: four times the largest single tensor an import accepts, far above the
 *                        largest model of the shared set (tens of MB), and still what a farm agent can hold)
 * @param maxKernels      distinct kernels in one artifact (default 10,000: a large transformer has a few
 *                        hundred; each kernel is C code the compiler must build)
 * @param maxSteps        kernel calls and copies of the graph executor (default 1,000,000: each is a table row
 *                        of entry.c, a few dozen bytes of source)
 * @param maxSourceBytes  generated C (kernels and executor) handed to the compiler (default 64 MiB: a 100k-step
 *                        chain generates about 3 MB; gcc needs roughly 100x the source in memory at -O3)
 */
public record CompileLimits(Duration compileTimeout, long maxArenaBytes, int maxKernels, int maxSteps, long maxSourceBytes) {
    public static final long GIB = 1L << 30;
    public static final CompileLimits DEFAULT = new CompileLimits(CCompiler.DEFAULT_TIMEOUT, 16 * GIB, 10_000, 1_000_000, 64L << 20);

    public CompileLimits {
        Objects.requireNonNull(compileTimeout, "compileTimeout");
        if (compileTimeout.isNegative() || compileTimeout.isZero()) throw new IllegalArgumentException("compileTimeout must be positive, got " + compileTimeout);
        if (maxArenaBytes < 0) throw new IllegalArgumentException("maxArenaBytes must be >= 0, got " + maxArenaBytes);
        if (maxKernels < 0) throw new IllegalArgumentException("maxKernels must be >= 0, got " + maxKernels);
        if (maxSteps < 0) throw new IllegalArgumentException("maxSteps must be >= 0, got " + maxSteps);
        if (maxSourceBytes < 0) throw new IllegalArgumentException("maxSourceBytes must be >= 0, got " + maxSourceBytes);
    }

    public CompileLimits withCompileTimeout(Duration t) {
        return new CompileLimits(t, maxArenaBytes, maxKernels, maxSteps, maxSourceBytes);
    }

    public CompileLimits withMaxArenaBytes(long b) {
        return new CompileLimits(compileTimeout, b, maxKernels, maxSteps, maxSourceBytes);
    }

    public CompileLimits withMaxKernels(int k) {
        return new CompileLimits(compileTimeout, maxArenaBytes, k, maxSteps, maxSourceBytes);
    }

    public CompileLimits withMaxSteps(int s) {
        return new CompileLimits(compileTimeout, maxArenaBytes, maxKernels, s, maxSourceBytes);
    }

    public CompileLimits withMaxSourceBytes(long b) {
        return new CompileLimits(compileTimeout, maxArenaBytes, maxKernels, maxSteps, b);
    }

    /** {@code 17179869184} as {@code "16 GiB"}, {@code 1500} as {@code "1500 bytes"}: limits and sizes in messages. */
    public static String bytes(long n) {
        if (n >= GIB && n % GIB == 0) return n / GIB + " GiB";
        if (n >= (1L << 20) && n % (1L << 20) == 0) return (n >> 20) + " MiB";
        if (n >= GIB * 1024) return String.format("%.1f TiB (%d bytes)", n / (GIB * 1024.0), n);
        if (n >= GIB) return String.format("%.1f GiB (%d bytes)", n / (double) GIB, n);
        return n + " bytes";
    }
}
