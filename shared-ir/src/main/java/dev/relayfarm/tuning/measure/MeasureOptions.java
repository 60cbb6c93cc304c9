package dev.relayfarm.tuning.measure;

import java.time.Duration;
import java.util.Objects;

/**
 * How the sandboxed runner times and confines candidates (TVM's {@code LocalRunner} arguments, plus the sandbox's).
 *
 * @param number           kernel calls per timed repeat to start from; raised (×2 to ×10 per step) until one repeat
 *                         takes at least {@code minRepeatMs}, so a 3 µs kernel is not timed by a clock tick
 * @param repeat           timed repeats; the cost is their median, the spread their coefficient of variation
 * @param minRepeatMs      the shortest a repeat may take (0: {@code number} is used as given)
 * @param warmup           untimed calls after the correctness call (page faults, thread start, branch predictors)
 * @param flushCache       write a buffer larger than the last-level cache before every repeat, so each repeat starts
 *                         from a cold cache; the calls within a repeat then run warm, so the cost is mostly a warm-cache
 *                         time (what a kernel whose weights and inputs fit the cache sees in a model), with the cold
 *                         start of each repeat averaged in
 * @param threads          threads for the kernel's parallel loops ({@code rf_set_num_threads}; 0: every online CPU)
 * @param seed             the PRNG seed of the inputs: every candidate of a batch sees the same inputs
 * @param buildTimeout     wall-clock limit of one C build (a longer one is a {@code COMPILE_ERROR})
 * @param runTimeout       wall-clock limit of one candidate's process, correctness run, warm-up and timing together
 *                         (a longer one is a {@code TIMEOUT}, and its process group is killed)
 * @param memoryLimitBytes the candidate process's address-space limit ({@code RLIMIT_AS}); an allocation past it
 *                         fails, which the candidate reports as a {@code RUNTIME_ERROR}
 * @param buildParallelism how many C builds run at once (runs are always one at a time: they share the device)
 */
public record MeasureOptions(int number, int repeat, double minRepeatMs, int warmup, boolean flushCache, int threads, long seed,
        Duration buildTimeout, Duration runTimeout, long memoryLimitBytes, int buildParallelism) {

    /**
     * For tuning: 5 repeats of at least 20 ms after 3 warm-up calls (the median of 5 shrugs off two disturbed
     * repeats), cache flushed, 10 s per candidate (TVM's default), 2 GiB of address space, two builds at a time.
     */
    public static final MeasureOptions DEFAULT = new MeasureOptions(1, 5, 20, 3, true, 0, 0x5EEDL, Duration.ofMinutes(1), Duration.ofSeconds(10),
            2L << 30, 2);

    /** For tests: 3 short repeats, no flush, one thread, a 5 s limit, 1 GiB. */
    public static final MeasureOptions FAST = new MeasureOptions(1, 3, 1, 1, false, 1, 0x5EEDL, Duration.ofMinutes(1), Duration.ofSeconds(5), 1L << 30, 2);

    public MeasureOptions {
        Objects.requireNonNull(buildTimeout, "buildTimeout");
        Objects.requireNonNull(runTimeout, "runTimeout");
        if (number < 1) throw new IllegalArgumentException("number must be >= 1, got " + number);
        if (repeat < 1) throw new IllegalArgumentException("repeat must be >= 1, got " + repeat);
        if (!(minRepeatMs >= 0) || Double.isInfinite(minRepeatMs)) throw new IllegalArgumentException("minRepeatMs must be finite and >= 0, got " + minRepeatMs);
        if (warmup < 0) throw new IllegalArgumentException("warmup must be >= 0, got " + warmup);
        if (threads < 0) throw new IllegalArgumentException("threads must be >= 0 (0: all online CPUs), got " + threads);
        if (buildTimeout.isNegative() || buildTimeout.isZero()) throw new IllegalArgumentException("buildTimeout must be positive, got " + buildTimeout);
        if (runTimeout.isNegative() || runTimeout.isZero()) throw new IllegalArgumentException("runTimeout must be positive, got " + runTimeout);
        if (memoryLimitBytes < 16L << 20) throw new IllegalArgumentException("memoryLimitBytes must be at least 16 MiB (the process must load), got " + memoryLimitBytes);
        if (buildParallelism < 1) throw new IllegalArgumentException("buildParallelism must be >= 1, got " + buildParallelism);
    }

    public MeasureOptions withRepeat(int n, double minMs) {
        return new MeasureOptions(number, n, minMs, warmup, flushCache, threads, seed, buildTimeout, runTimeout, memoryLimitBytes, buildParallelism);
    }

    public MeasureOptions withFlushCache(boolean flush) {
        return new MeasureOptions(number, repeat, minRepeatMs, warmup, flush, threads, seed, buildTimeout, runTimeout, memoryLimitBytes, buildParallelism);
    }

    public MeasureOptions withThreads(int n) {
        return new MeasureOptions(number, repeat, minRepeatMs, warmup, flushCache, n, seed, buildTimeout, runTimeout, memoryLimitBytes, buildParallelism);
    }

    public MeasureOptions withRunTimeout(Duration limit) {
        return new MeasureOptions(number, repeat, minRepeatMs, warmup, flushCache, threads, seed, buildTimeout, limit, memoryLimitBytes, buildParallelism);
    }

    public MeasureOptions withMemoryLimit(long bytes) {
        return new MeasureOptions(number, repeat, minRepeatMs, warmup, flushCache, threads, seed, buildTimeout, runTimeout, bytes, buildParallelism);
    }

    public MeasureOptions withSeed(long s) {
        return new MeasureOptions(number, repeat, minRepeatMs, warmup, flushCache, threads, s, buildTimeout, runTimeout, memoryLimitBytes, buildParallelism);
    }
}
