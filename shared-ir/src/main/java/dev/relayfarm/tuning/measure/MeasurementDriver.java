package dev.relayfarm.tuning.measure;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.codegen.HugePages;
import java.util.List;

/**
 * The C {@code main} appended to a candidate's kernel source: one measurement program per candidate, run in its own
 * process by {@link Sandbox}. Its arguments, not its source, carry the options, so one build serves any options.
 *
 * <p>What it does, in order:
 * <ol>
 *   <li>allocates every parameter 64-byte aligned (the kernel ABI's promise; 64 KiB and more on 2 MiB huge pages, as the
 *       artifact does, see {@link HugePages}), fills the inputs from a splitmix64
 *       stream seeded by {@code seed} (floats uniform in [-1, 1), bools 0/1, integers 0: an integer input may be an
 *       index, and 0 is in bounds for every shape) and the outputs with 0xFF bytes (NaN for floats, so an element a
 *       kernel forgets to write differs from the reference);</li>
 *   <li>calls the kernel once and writes its outputs, in signature order, raw little-endian, to {@code outputs-path}
 *       (the correctness check reads this first call: a kernel that accumulates into its output without clearing it
 *       is wrong there, even if later calls were to agree);</li>
 *   <li>{@code warmup} untimed calls;</li>
 *   <li>raises {@code number} until {@code number} calls take at least {@code min-repeat-ns}
 *       ({@code clock_gettime(CLOCK_MONOTONIC)}) twice in a row (×2 to ×10 per step, aiming 20% past it);</li>
 *   <li>{@code repeat} timed repeats of {@code number} calls, each after writing a {@code flush-bytes} buffer when it
 *       is not 0, printing {@code relayfarm-repeat <seconds per call>} per repeat after {@code relayfarm-number N}.</li>
 * </ol>
 * Exit status: 0, or {@link #EXIT_USAGE}, {@link #EXIT_KERNEL_FAILED}, {@link #EXIT_NO_MEMORY}, {@link #EXIT_IO}
 * with a line on stderr; a crash is a signal.
 */
public final class MeasurementDriver {
    /** Wrong arguments (a runner bug). */
    public static final int EXIT_USAGE = 2;
    /** The kernel returned non-zero: it could not allocate a heap intermediate. */
    public static final int EXIT_KERNEL_FAILED = 3;
    /** The driver could not allocate a parameter or the flush buffer (the memory limit). */
    public static final int EXIT_NO_MEMORY = 4;
    /** The outputs could not be written. */
    public static final int EXIT_IO = 5;

    /** Prefix of the driver's result lines on stdout (stderr shares the pipe, so lines are tagged). */
    static final String NUMBER_LINE = "relayfarm-number ";
    static final String REPEAT_LINE = "relayfarm-repeat ";

    private MeasurementDriver() {}

    /** The arguments of the program, after its path. */
    static List<String> arguments(String outputsPath, MeasureOptions o, long flushBytes) {
        long minRepeatNs = Math.round(o.minRepeatMs() * 1e6);
        return List.of(outputsPath, Long.toUnsignedString(o.seed()), Integer.toString(o.warmup()), Integer.toString(o.number()), Integer.toString(o.repeat()),
                Long.toString(minRepeatNs), Long.toString(o.flushCache() ? flushBytes : 0), Integer.toString(o.threads()));
    }

    /** {@code kernelSource} with the measurement {@code main} for the kernel {@code signature} names. */
    public static String program(String kernelSource, KernelSignature signature) {
        String name = signature.name();
        if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) throw new IllegalArgumentException("kernel name " + name + " is not a C identifier");
        List<TensorSpec> params = signature.params();
        StringBuilder sizes = new StringBuilder();
        StringBuilder fills = new StringBuilder();
        for (int i = 0; i < params.size(); i++) {
            TensorSpec p = params.get(i);
            sizes.append(i == 0 ? "" : ", ").append(p.byteSize()).append("ULL");
            if (i < signature.numInputs()) fills.append("    ").append(fill(p.dtype(), i, p.elementCount())).append('\n');
        }
        int n = params.size();
        return kernelSource + DRIVER
                .replace("$NPARAMS", Integer.toString(Math.max(n, 1)))
                .replace("$COUNT", Integer.toString(n))
                .replace("$NINPUTS", Integer.toString(signature.numInputs()))
                .replace("$SIZES", n == 0 ? "0" : sizes.toString())
                .replace("$FILLS", fills.toString())
                .replace("$KERNEL", name);
    }

    private static String fill(DType t, int i, long count) {
        String args = "args[" + i + "], " + count + "ULL";
        if (t.isFloat() && t.bits() == 32) return "rf_fill_f32(" + args + ");";
        if (t.isFloat() && t.bits() == 64) return "rf_fill_f64(" + args + ");";
        if (t.isBool()) return "rf_fill_bool(" + args + ");";
        // integers (and dtypes C has no type for): zeros, set by calloc-like memset below
        return "memset(args[" + i + "], 0, rf_bytes[" + i + "]);";
    }

    private static final String DRIVER = """

            /* ---- measurement driver (dev.relayfarm.tuning.measure.MeasurementDriver) ---- */
            #include <stdio.h>
            #include <string.h>
            #include <errno.h>
            static uint64_t rf_rng;
            static uint64_t rf_next(void) { /* splitmix64 */
                uint64_t z = (rf_rng += 0x9E3779B97F4A7C15ULL);
                z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
                z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
                return z ^ (z >> 31);
            }
            static void rf_fill_f32(void* p, uint64_t n) {
                float* f = (float*) p;
                for (uint64_t i = 0; i < n; i++) f[i] = (float) ((double) (rf_next() >> 40) * (2.0 / 16777216.0) - 1.0);
            }
            static void rf_fill_f64(void* p, uint64_t n) {
                double* f = (double*) p;
                for (uint64_t i = 0; i < n; i++) f[i] = (double) (rf_next() >> 11) * (2.0 / 9007199254740992.0) - 1.0;
            }
            static void rf_fill_bool(void* p, uint64_t n) {
                uint8_t* b = (uint8_t*) p;
                for (uint64_t i = 0; i < n; i++) b[i] = (uint8_t) (rf_next() >> 63);
            }
            """ + HugePages.C + """
            static const unsigned long long rf_bytes[$NPARAMS] = { $SIZES };
            static int64_t rf_clock_ns(void) {
                struct timespec t;
                clock_gettime(CLOCK_MONOTONIC, &t);
                return (int64_t) t.tv_sec * 1000000000LL + t.tv_nsec;
            }
            static void* args[$NPARAMS];
            /* called through a volatile pointer: the compiler cannot inline the kernel into this loop and specialize it
               for these buffers, so the code timed is the code the artifact ships */
            static int32_t (*volatile rf_kernel)(void* const*) = $KERNEL;
            static int rf_call(int64_t times) {
                for (int64_t i = 0; i < times; i++) {
                    int32_t rc = rf_kernel(args);
                    if (rc != 0) {
                        fprintf(stderr, "relayfarm-driver: kernel $KERNEL returned %d (a heap intermediate could not be allocated)\\n", (int) rc);
                        return 0;
                    }
                }
                return 1;
            }
            int main(int argc, char** argv) {
                if (argc != 9) {
                    fprintf(stderr, "usage: %s outputs-path seed warmup number repeat min-repeat-ns flush-bytes threads\\n", argv[0]);
                    return 2;
                }
                const char* outputs = argv[1];
                rf_rng = strtoull(argv[2], NULL, 10);
                long warmup = strtol(argv[3], NULL, 10), repeat = strtol(argv[5], NULL, 10);
                int64_t number = strtoll(argv[4], NULL, 10), min_ns = strtoll(argv[6], NULL, 10);
                unsigned long long flush_bytes = strtoull(argv[7], NULL, 10);
                rf_set_num_threads((int) strtol(argv[8], NULL, 10));
                for (int i = 0; i < $COUNT; i++) {
                    if ((args[i] = rf_pages_alloc(rf_bytes[i])) == NULL) {
                        fprintf(stderr, "relayfarm-driver: cannot allocate %llu bytes for parameter %d (memory limit?)\\n", rf_bytes[i], i);
                        return 4;
                    }
                    if (i >= $NINPUTS) memset(args[i], 0xFF, rf_bytes[i]);
                }
            $FILLS
                if (!rf_call(1)) return 3;
                FILE* out = fopen(outputs, "wb");
                if (out == NULL) {
                    fprintf(stderr, "relayfarm-driver: cannot open %s: %s\\n", outputs, strerror(errno));
                    return 5;
                }
                for (int i = $NINPUTS; i < $COUNT; i++) {
                    if (fwrite(args[i], 1, rf_bytes[i], out) != rf_bytes[i]) {
                        fprintf(stderr, "relayfarm-driver: cannot write %s: %s\\n", outputs, strerror(errno));
                        return 5;
                    }
                }
                if (fclose(out) != 0) {
                    fprintf(stderr, "relayfarm-driver: cannot write %s: %s\\n", outputs, strerror(errno));
                    return 5;
                }
                if (!rf_call(warmup)) return 3;
                volatile unsigned char* flush = NULL;
                if (flush_bytes > 0) {
                    flush = (volatile unsigned char*) malloc(flush_bytes);
                    if (flush == NULL) {
                        fprintf(stderr, "relayfarm-driver: cannot allocate a %llu-byte cache flush buffer (memory limit?)\\n", flush_bytes);
                        return 4;
                    }
                }
                /* raise number until two blocks in a row take min_ns (a kernel still warming up is faster on the
                   second); these calls also warm up */
                for (int reached = 0;;) {
                    int64_t t0 = rf_clock_ns();
                    if (!rf_call(number)) return 3;
                    int64_t t = rf_clock_ns() - t0;
                    if (number >= (1LL << 40)) break;
                    if (t >= min_ns) {
                        if (++reached == 2) break;
                        continue;
                    }
                    reached = 0;
                    int64_t factor = t <= 0 ? 10 : (int64_t) ((double) min_ns * 1.2 / (double) t) + 1;
                    if (factor < 2) factor = 2;
                    if (factor > 10) factor = 10;
                    number *= factor;
                }
                printf("relayfarm-number %lld\\n", (long long) number);
                for (long r = 0; r < repeat; r++) {
                    if (flush != NULL) {
                        for (unsigned long long i = 0; i < flush_bytes; i += 64) flush[i] = (unsigned char) (flush[i] + r + 1);
                    }
                    int64_t t0 = rf_clock_ns();
                    if (!rf_call(number)) return 3;
                    int64_t t = rf_clock_ns() - t0;
                    printf("relayfarm-repeat %.9e\\n", (double) t * 1e-9 / (double) number);
                }
                fflush(stdout);
                return 0;
            }
            """;
}
