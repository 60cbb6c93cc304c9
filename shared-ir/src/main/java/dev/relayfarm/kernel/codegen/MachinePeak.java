package dev.relayfarm.kernel.codegen;

import dev.relayfarm.process.ChildProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * This machine's float32 FMA peak and memory bandwidth ({@link #bandwidth}), measured rather than computed from a
 * nominal clock. For the peak, {@code threads} threads each run {@value #CHAINS} independent chains of 8-lane
 * (256-bit, the width our kernels are scheduled for) fused multiply-adds on registers for about {@value #SECONDS} s,
 * built by the host C compiler with the kernels' flags. /proc/cpuinfo's
 * "cpu MHz" is the nominal or momentary clock; under load a core boosts past it (our convolutions measured above a
 * peak computed from 2.6 GHz), so a "% of peak" against it would flatter every kernel.
 */
public final class MachinePeak {
    /** Independent accumulators: more than FMA latency (4) x FMA ports (2), so the chains never wait on each other. */
    static final int CHAINS = 12;
    static final double SECONDS = 0.3;

    private MachinePeak() {}

    /** The measured GFLOP/s of {@code threads} threads (2 FLOPs a lane per FMA); empty without a C compiler. */
    public static OptionalDouble measure(int threads) {
        return run(source(), threads, Double.toString(SECONDS));
    }

    /** Builds {@code source}, runs it with {@code threads} and {@code args}, and reads the number its last line starts with. */
    private static OptionalDouble run(String source, int threads, String... args) {
        if (threads < 1) throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        CCompiler cc = CCompiler.host().orElse(null);
        if (cc == null) return OptionalDouble.empty();
        Path exe = cc.compileExecutable(source);
        List<String> cmd = new java.util.ArrayList<>(List.of(exe.toString(), Integer.toString(threads)));
        cmd.addAll(List.of(args));
        ChildProcess.Result r;
        try {
            r = ChildProcess.run(cmd, ChildProcess.Options.DEFAULT.withTimeout(Duration.ofSeconds(30)));
        } catch (IOException e) {
            throw new IllegalStateException("machine measurement failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("machine measurement interrupted", e);
        }
        if (r.exitCode() != 0) throw new IllegalStateException("machine measurement failed (exit " + r.exitCode() + "): " + r.log());
        String line = r.output().strip().lines().reduce((a, b) -> b).orElse("");
        try {
            return OptionalDouble.of(Double.parseDouble(line.split("\\s+")[0]));
        } catch (NumberFormatException e) {
            throw new IllegalStateException("machine measurement printed no number: " + r.log(), e);
        }
    }

    /** Floats in each of the bandwidth measurement's three arrays: 64 MiB each, past any last-level cache here. */
    static final long STREAM_FLOATS = 16L << 20;

    /**
     * The measured memory bandwidth of {@code threads} threads in GB/s: STREAM's triad {@code a[i] = b[i] + s * c[i]} over
     * three arrays of {@value #STREAM_FLOATS} floats, each thread its own slice, best of 5 passes after a first that
     * touches the pages (12 bytes moved per element). Empty without a C compiler.
     */
    public static OptionalDouble bandwidth(int threads) {
        return run(streamSource(), threads);
    }

    /**
     * What the two memory programs share: {@code pass()} runs {@code work(id)} on each of {@code threads} threads (the
     * caller's included) and joins them; {@code main} starts by reading the thread count from argv[1].
     */
    private static final String THREADS = """
                static void pass(void) {
                    pthread_t ids[256];
                    for (long i = 1; i < threads; i++) pthread_create(&ids[i], NULL, work, (void*) i);
                    work(0);
                    for (long i = 1; i < threads; i++) pthread_join(ids[i], NULL);
                }
                int main(int argc, char** argv) {
                    threads = argc > 1 ? atoi(argv[1]) : 1;
                    if (threads < 1 || threads > 256) return 2;
            """;

    /** Bytes the read-bandwidth measurement streams: 256 MiB, past any last-level cache here. */
    static final long READ_BYTES = 256L << 20;

    /**
     * The measured read-only memory bandwidth of {@code threads} threads in GB/s: each thread sums its slice of one
     * {@value #READ_BYTES}-byte array as four streams side by side (a dense kernel reads several weight rows at once,
     * and the prefetchers serve several streams faster than one) with 8-lane integer vectors (integer addition needs no
     * fast-math to vectorize), best of 10 passes after one that touches the pages. A weight-streaming kernel (a dense layer at batch 1) reads and hardly writes: the triad of
     * {@link #bandwidth} moves a third of its bytes as writes and reads less than this (one thread here: a 4096x9216
     * dense read its weights at 24.7 GB/s, the triad 20.2). Empty without a C compiler.
     */
    public static OptionalDouble readBandwidth(int threads) {
        return run(readSource(), threads);
    }

    /**
     * Bytes of the last-level cache of CPU 0 as Linux reports it ({@code /sys/devices/system/cpu/cpu0/cache/index*}, the
     * highest level); empty where it reports none.
     */
    public static java.util.OptionalLong lastLevelCacheBytes() {
        java.util.OptionalLong best = java.util.OptionalLong.empty();
        int level = 0;
        for (int i = 0; i < 8; i++) {
            java.nio.file.Path dir = java.nio.file.Path.of("/sys/devices/system/cpu/cpu0/cache/index" + i);
            try {
                int l = Integer.parseInt(java.nio.file.Files.readString(dir.resolve("level")).strip());
                String size = java.nio.file.Files.readString(dir.resolve("size")).strip();
                long bytes = size.endsWith("K") ? Long.parseLong(size.substring(0, size.length() - 1)) << 10
                        : size.endsWith("M") ? Long.parseLong(size.substring(0, size.length() - 1)) << 20 : Long.parseLong(size);
                if (l > level) {
                    level = l;
                    best = java.util.OptionalLong.of(bytes);
                }
            } catch (java.io.IOException | NumberFormatException e) {
                // no such cache index (or an unreadable one): the levels found so far stand
            }
        }
        return best;
    }

    /** The read program: argv[1] threads; prints GB/s of all threads together. */
    static String readSource() {
        return String.format(Locale.ROOT, """
                // Generated by RelayFarm (dev.relayfarm.kernel.codegen.MachinePeak): memory read bandwidth.
                #define _POSIX_C_SOURCE 200112L
                #include <pthread.h>
                #include <stdio.h>
                #include <stdlib.h>
                #include <time.h>
                #define BYTES %dL
                typedef unsigned v8 __attribute__((vector_size(32)));
                static v8* data;
                static int threads;
                static volatile unsigned sink;
                static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
                static void* work(void* arg) {
                    long n = BYTES / 32, id = (long) arg;
                    long lo = n / threads * id, hi = id == threads - 1 ? n : n / threads * (id + 1), len = (hi - lo) / 4;
                    const v8 *a = data + lo, *b = a + len, *c = b + len, *d = c + len;
                    v8 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
                    for (long i = 0; i + 2 <= len; i += 2) {
                        s0 += a[i] + a[i + 1]; s1 += b[i] + b[i + 1]; s2 += c[i] + c[i + 1]; s3 += d[i] + d[i + 1];
                    }
                    v8 s = s0 + s1 + s2 + s3;
                    unsigned t = 0;
                    for (int l = 0; l < 8; l++) t += s[l];
                    sink += t;
                    return NULL;
                }
                """ + THREADS + """
                    if (posix_memalign((void**) &data, 64, BYTES)) return 3;
                    unsigned* words = (unsigned*) data;
                    for (long i = 0; i < BYTES / 4; i++) words[i] = (unsigned) (i %% 7);
                    pass();
                    double best = 1e30;
                    for (int k = 0; k < 10; k++) { double t0 = now(); pass(); double t = now() - t0; if (t < best) best = t; }
                    printf("%%.2f GB/s (%%u)\\n", BYTES / best / 1e9, sink);
                    return 0;
                }
                """, READ_BYTES);
    }

    /** The triad program: argv[1] threads; prints GB/s of all threads together. */
    static String streamSource() {
        return String.format(Locale.ROOT, """
                // Generated by RelayFarm (dev.relayfarm.kernel.codegen.MachinePeak): memory bandwidth (STREAM triad).
                #define _POSIX_C_SOURCE 200112L
                #include <pthread.h>
                #include <stdio.h>
                #include <stdlib.h>
                #include <time.h>
                #define N %dL
                static float *a, *b, *c;
                static int threads;
                static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
                static void* work(void* arg) {
                    long id = (long) arg, lo = N / threads * id, hi = id == threads - 1 ? N : N / threads * (id + 1);
                    for (long i = lo; i < hi; i++) a[i] = b[i] + 0.5f * c[i];
                    return NULL;
                }
                """ + THREADS + """
                    if (posix_memalign((void**) &a, 64, N * 4) || posix_memalign((void**) &b, 64, N * 4) || posix_memalign((void**) &c, 64, N * 4)) return 3;
                    for (long i = 0; i < N; i++) { b[i] = (float) (i %% 7); c[i] = (float) (i %% 5); }
                    pass();
                    double best = 1e30;
                    for (int k = 0; k < 5; k++) { double t0 = now(); pass(); double t = now() - t0; if (t < best) best = t; }
                    printf("%%.2f GB/s (%%g)\\n", 12.0 * N / best / 1e9, (double) a[N / 3]);
                    return 0;
                }
                """, STREAM_FLOATS);
    }

    /** The measuring program: argv[1] threads, argv[2] seconds; prints GFLOP/s of all threads together. */
    static String source() {
        StringBuilder chains = new StringBuilder(), init = new StringBuilder(), sum = new StringBuilder();
        for (int i = 0; i < CHAINS; i++) {
            init.append("    v8 a").append(i).append(" = b * (float) ").append(i + 1).append(";\n");
            chains.append("            a").append(i).append(" = a").append(i).append(" * b + c;\n");
            sum.append(i == 0 ? "    v8 s = a0" : " + a" + i);
        }
        return String.format(Locale.ROOT, """
                // Generated by RelayFarm (dev.relayfarm.kernel.codegen.MachinePeak): float32 FMA throughput.
                #define _POSIX_C_SOURCE 200112L
                #include <pthread.h>
                #include <stdio.h>
                #include <stdlib.h>
                #include <time.h>
                typedef float v8 __attribute__((vector_size(32)));
                static volatile float sink;
                static long iterations;
                static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
                static void* work(void* arg) {
                    v8 b = (v8) {0.999f, 0.999f, 0.999f, 0.999f, 0.999f, 0.999f, 0.999f, 0.999f} + (float) (long) arg * 1e-9f;
                    v8 c = b * 1e-3f;
                %s
                    for (long i = 0; i < iterations; i++) {
                        for (int k = 0; k < 64; k++) {
                %s        }
                    }
                %s;
                    float t = 0;
                    for (int l = 0; l < 8; l++) t += s[l];
                    sink = t;
                    return NULL;
                }
                static double run(int threads) {
                    pthread_t ids[256];
                    double t0 = now();
                    for (int i = 1; i < threads; i++) pthread_create(&ids[i], NULL, work, (void*) (long) i);
                    work(0);
                    for (int i = 1; i < threads; i++) pthread_join(ids[i], NULL);
                    return now() - t0;
                }
                int main(int argc, char** argv) {
                    int threads = argc > 1 ? atoi(argv[1]) : 1;
                    double seconds = argc > 2 ? atof(argv[2]) : 0.3;
                    if (threads < 1 || threads > 256) return 2;
                    iterations = 1000;
                    double t = run(threads);
                    while (t < seconds / 4) { iterations *= 2; t = run(threads); }
                    t = run(threads);
                    double flops = (double) iterations * 64 * %d * 8 * 2 * threads;
                    printf("%%.2f GFLOP/s\\n", flops / t / 1e9);
                    return 0;
                }
                """, init, chains, sum, CHAINS);
    }
}
