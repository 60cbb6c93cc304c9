package dev.relayfarm.kernel.codegen;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.HalfFloats;
import dev.relayfarm.ir.MiniFloats;
import dev.relayfarm.kernel.expr.Binary;
import dev.relayfarm.kernel.expr.BitCast;
import dev.relayfarm.kernel.expr.Buffer;
import dev.relayfarm.kernel.expr.Call;
import dev.relayfarm.kernel.expr.Cast;
import dev.relayfarm.kernel.expr.FloatImm;
import dev.relayfarm.kernel.expr.IntImm;
import dev.relayfarm.kernel.expr.Load;
import dev.relayfarm.kernel.expr.PrimExpr;
import dev.relayfarm.kernel.expr.Reduce;
import dev.relayfarm.kernel.expr.Select;
import dev.relayfarm.kernel.expr.Simplifier;
import dev.relayfarm.kernel.expr.TensorLoad;
import dev.relayfarm.kernel.expr.Unary;
import dev.relayfarm.kernel.expr.UnaryOp;
import dev.relayfarm.kernel.expr.Var;
import dev.relayfarm.kernel.loop.Allocate;
import dev.relayfarm.kernel.loop.Evaluate;
import dev.relayfarm.kernel.loop.For;
import dev.relayfarm.kernel.loop.ForKind;
import dev.relayfarm.kernel.loop.IfThenElse;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.loop.Scope;
import dev.relayfarm.kernel.loop.Seq;
import dev.relayfarm.kernel.loop.Stmt;
import dev.relayfarm.kernel.loop.Store;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Prints lowered kernels as one portable C99 translation unit (plus {@code omp simd} pragmas and the GCC/Clang
 * {@code __builtin_assume_aligned}).
 *
 * <p><b>ABI</b> (the same for every kernel, so one FFM descriptor and one graph executor call fit all):
 * <pre>
 * int32_t NAME(void* const* args);
 * </pre>
 * {@code args[i]} points at parameter {@code i} (the inputs, then the outputs, in
 * {@link LoweredFunc#params()} order): a dense row-major array of the parameter's dtype and static
 * shape, 64-byte aligned, not overlapping any other parameter. The function returns 0, or -1 when a
 * heap intermediate cannot be allocated. Shapes are compiled in; the caller checks them (the Java
 * runtime does, from the kernel's signature).
 *
 * <p>Loops: {@code PARALLEL} → the body outlined into {@code static void rf_par_<kernel>_<k>(ctx, begin, end)}, never inlined
 * (inlined into the kernel for a one-thread call, it vectorized worse)
 * with the variables in scope passed in a struct, run by {@link ParallelRuntime}'s {@code rf_parallel_for};
 * {@code VECTORIZED} → {@code #pragma omp simd} (compiled with {@code -fopenmp-simd}: the pragma, no OpenMP
 * runtime), {@code UNROLLED} → {@code #pragma GCC unroll N}. Local buffers are aligned
 * stack arrays (small tiles the compiler can keep in registers); global ones come from
 * {@code posix_memalign} (C99 has no aligned allocation). Float min/max are {@code a > b ? a : b} (vectorizable; a NaN operand is not
 * propagated as in Java's {@code Math.max}).
 */
public final class CEmitter {
    private CEmitter() {}

    /**
     * float16 and bfloat16: stored as {@code uint16_t} bits; in expressions a value of either dtype is a
     * C {@code float} holding a value exactly representable in it. Loads widen ({@code rf_h2f},
     * {@code rf_bf2f}, exact), arithmetic runs in float32 and every 16-bit-float-typed result is rounded
     * back ({@code rf_hr}, {@code rf_bfr}) as the interpreter rounds each operator's result, and stores
     * narrow the (already representable) value. Conversions mirror {@link HalfFloats} bit for bit:
     * nearest-even rounding, a float64 narrowed once by rounding to odd in float32 first ({@code rf_odd}),
     * float16 NaN keeping sign and high payload bits (quieted), bfloat16 NaN → {@code 0x7fc0}.
     */
    static final String HALF_PRELUDE = """
            static inline uint32_t rf_fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
            static inline float rf_bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
            static inline float rf_odd(double d) {
              float f = (float)d;
              if (d != d || (double)f == d) return f;
              if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
              return rf_bitsf(rf_fbits(f) | 1u);
            }
            static inline uint16_t rf_f2h(float f) {
              uint32_t u = rf_fbits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
              if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a & 0x7fffffu) >> 13));
              if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and up round to infinity */
              uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
              if (e < 113) { /* below 2^-14: a subnormal float16 (or zero) counting units of 2^-24 */
                if (e < 102) return (uint16_t)sign;
                uint32_t shift = 126 - e, q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
                if (rem > half || (rem == half && (q & 1u))) q++;
                return (uint16_t)(sign | q);
              }
              uint32_t h = ((e - 112) << 10) | ((a & 0x7fffffu) >> 13), rem = a & 0x1fffu;
              if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* a carry into the exponent is right */
              return (uint16_t)(sign | h);
            }
            static inline float rf_h2f(uint16_t h) {
              uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
              if (e == 0x1f) return rf_bitsf(sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0u));
              if (e == 0) { float v = (float)m * 5.9604644775390625e-8f; return sign ? -v : v; }
              return rf_bitsf(sign | ((e + 112) << 23) | (m << 13));
            }
            static inline uint16_t rf_f2bf(float f) {
              if (f != f) return 0x7fc0u;
              uint32_t u = rf_fbits(f);
              return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
            }
            static inline float rf_bf2f(uint16_t b) {
              uint32_t u = (uint32_t)b << 16;
              if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) u |= 0x400000u; /* NaN comes back quiet */
              return rf_bitsf(u);
            }
            static inline float rf_hr(float f) { return rf_h2f(rf_f2h(f)); }
            static inline float rf_bfr(float f) { return rf_bf2f(rf_f2bf(f)); }
            static inline uint16_t rf_d2h(double d) { return rf_f2h(rf_odd(d)); }
            static inline uint16_t rf_d2bf(double d) { return rf_f2bf(rf_odd(d)); }
            """;

    /**
     * The 8/4-bit floats ({@link MiniFloats}): stored as {@code uint8_t} codes; in expressions a C
     * {@code float} (exact), like the 16-bit floats. {@code rf_mf_dec} decodes, {@code rf_mf_enc}
     * encodes a double rounding once to nearest even (e8m0: by round mode 0 up, 1 down, 2 nearest),
     * with or without saturation, bit for bit as {@link MiniFloats#encode}; {@code fmt} is the
     * {@link MiniFloats.Format} ordinal. {@code rf_lowi}/{@code rf_lowu} wrap an integer to 4 or 2 bits.
     */
    static final String MINI_PRELUDE = """
            static const int rf_mf_mb[6] = {3, 3, 2, 2, 0, 1}, rf_mf_bias[6] = {7, 8, 15, 16, 127, 1};
            static const double rf_mf_max[6] = {448.0, 240.0, 57344.0, 57344.0, 0x1p127, 6.0};
            static inline float rf_mf_dec(int fmt, uint8_t c) {
              if (fmt == 4) return c == 0xffu ? NAN : (float)ldexp(1.0, (int)c - 127);
              int mb = rf_mf_mb[fmt], bias = rf_mf_bias[fmt], sbit = fmt == 5 ? 8 : 0x80;
              c &= (uint8_t)(2 * sbit - 1);
              int mag = c & (sbit - 1), neg = (c & sbit) != 0, ef = mag >> mb, man = mag & ((1 << mb) - 1);
              if ((fmt == 1 || fmt == 3) && c == 0x80u) return NAN;
              if (fmt == 0 && mag == 0x7f) return neg ? -NAN : NAN; /* the sign survives a round trip */
              if (fmt == 2 && ef == 0x1f) return man ? (neg ? -NAN : NAN) : (neg ? -INFINITY : INFINITY);
              double v = ef == 0 ? ldexp((double)man, 1 - bias - mb) : ldexp((double)((1 << mb) | man), ef - bias - mb);
              return (float)(neg ? -v : v);
            }
            static inline uint8_t rf_mf_enc(int fmt, double v, int sat, int mode) {
              if (fmt == 4) {
                if (v != v) return 0xffu;
                double a = fabs(v);
                if (isinf(a)) return sat ? 0xfeu : 0xffu;
                if (a < 0x1p-127) return 0u;
                int e = ilogb(a), k = e;
                if (a != ldexp(1.0, e)) k = mode == 0 ? e + 1 : mode == 1 ? e : (a >= ldexp(1.5, e) ? e + 1 : e);
                if (k > 127) return sat ? 0xfeu : 0xffu;
                return (uint8_t)((k < -127 ? -127 : k) + 127);
              }
              int mb = rf_mf_mb[fmt], bias = rf_mf_bias[fmt], sbit = fmt == 5 ? 8 : 0x80;
              int sign = signbit(v) ? sbit : 0, fnuz = fmt == 1 || fmt == 3;
              if (v != v) return (uint8_t)(fmt == 0 ? sign | 0x7f : fmt == 2 ? sign | 0x7e : fmt == 5 ? 0x8 : 0x80);
              double a = fabs(v), mx = rf_mf_max[fmt];
              if (a > mx && (sat || fmt == 5)) a = mx;
              int minexp = 1 - bias;
              double r = a;
              if (!isinf(a)) {
                int e = ilogb(a);
                int q = (e > minexp ? e : minexp) - mb;
                r = ldexp(rint(ldexp(a, -q)), q);
              }
              if (r > mx) return (uint8_t)(fmt == 2 ? sign | 0x7c : fmt == 0 ? sign | 0x7f : 0x80);
              if (r == 0) return (uint8_t)(fnuz ? 0 : sign);
              int e = ilogb(r), mag;
              if (e < minexp) mag = (int)ldexp(r, mb - minexp);
              else mag = ((e + bias) << mb) | ((int)ldexp(r, mb - e) - (1 << mb));
              return (uint8_t)(sign | mag);
            }
            static inline float rf_mf_r(int fmt, float f) { return rf_mf_dec(fmt, rf_mf_enc(fmt, (double)f, 0, 0)); }
            static inline int64_t rf_lowi(int64_t v, int bits) { return (int64_t)((uint64_t)v << (64 - bits)) >> (64 - bits); }
            static inline int64_t rf_lowu(int64_t v, int bits) { return v & ((1 << bits) - 1); }
            """;

    /**
     * Runs {@code n} kernel calls in order, the i-th {@code fns[i](args[i])}, and stops at the first that fails: its
     * index is returned and its status stored in {@code *rc}; -1 when all succeed. The VM queues the kernel calls of a
     * stretch of bytecode that reads no tensor data itself and runs them with one call from Java instead of one each:
     * a downcall per kernel made the VM 8% slower than the graph executor on a chain of 51 small kernels.
     */
    static final String BATCH_ENTRY = """
            typedef int32_t (*rf_kernel_fn)(void* const* args);
            __attribute__((visibility("default"))) int32_t rf_run_batch(int32_t n, rf_kernel_fn const* fns, void* const* const* args, int32_t* rc) {
              for (int32_t i = 0; i < n; i++) {
                int32_t r = fns[i](args[i]);
                if (r != 0) { *rc = r; return i; }
              }
              return -1;
            }
            """;

    /**
     * {@code round} on float32 (half away from zero, C's {@code roundf}) in operations the C compiler vectorizes under
     * its default IEEE flags: {@code roundf} and {@code truncf} vectorize only with {@code -fno-trapping-math} (a libm
     * call per element otherwise: every requantization to 8 bits, {@code round(x / s)}, ran at about 5 ns an element),
     * and that flag reshaped other loops (ppocr_cls's float32 hard-swish epilogues took 10-30% longer). Adding the float
     * below 0.5 rounds {@code |x| + 0.5} up to the next integer exactly when {@code roundf} does (a tie at {@code .5}
     * rounds to even, which is up); truncating clears the fraction's mantissa bits with integer masks (none below
     * exponent 0: a signed zero; none at or above 23: already an integer, or inf/NaN, kept). Equal to {@code roundf}
     * bit for bit on all 2^32 inputs (checked exhaustively when written; {@code RoundCodegenTest} checks the edges).
     */

    static final String ROUND_PRELUDE = """
            static inline float rf_roundf(float x) {
              uint32_t u = rf_fbits(x + copysignf(0x1.fffffep-2f, x));
              int32_t e = (int32_t)((u >> 23) & 0xffu) - 127;
              uint32_t m = e < 0 ? 0x80000000u : e >= 23 ? 0xffffffffu : ~(0x007fffffu >> e);
              return rf_bitsf(u & m);
            }
            """;

    public static final String PRELUDE = """
            // Generated by RelayFarm (dev.relayfarm.kernel.codegen.CEmitter). Do not edit.
            #define _POSIX_C_SOURCE 200112L
            #include <stdint.h>
            #include <stdlib.h>
            #include <math.h>
            #include <string.h>
            """ + ParallelRuntime.SOURCE + HALF_PRELUDE + MINI_PRELUDE + """
            static inline float rf_maxf(float a, float b) { return a > b ? a : b; }
            static inline float rf_minf(float a, float b) { return a < b ? a : b; }
            """ + ROUND_PRELUDE + """
            static inline double rf_max(double a, double b) { return a > b ? a : b; }
            static inline double rf_min(double a, double b) { return a < b ? a : b; }
            static inline int64_t rf_maxi(int64_t a, int64_t b) { return a > b ? a : b; }
            static inline int64_t rf_mini(int64_t a, int64_t b) { return a < b ? a : b; }
            static inline void* rf_alloc(size_t bytes) { void* p = NULL; return posix_memalign(&p, 64, bytes) == 0 ? p : NULL; }
            """ + BATCH_ENTRY;

    /** Innermost iterations below which a parallel loop nest runs serially (see {@link #iterations}). */
    public static final long MIN_PARALLEL_WORK = 1 << 17;

    /**
     * How many innermost statements a loop nest executes (static extents; an unknown extent counts as
     * large): the work estimate that decides whether a parallel loop is worth a thread team.
     */
    static long iterations(Stmt s) {
        return switch (s) {
            case For f -> f.extent() instanceof IntImm n ? saturatingMultiply(Math.max(n.value(), 0), iterations(f.body())) : UNKNOWN_WORK;
            case Seq q -> q.stmts().stream().mapToLong(CEmitter::iterations).reduce(0, (a, b) -> Math.min(UNKNOWN_WORK, a + b));
            case IfThenElse i -> Math.max(iterations(i.then()), i.otherwise().map(CEmitter::iterations).orElse(0L));
            case Allocate a -> iterations(a.body());
            case Store st -> 1;
            case Evaluate e -> 1;
        };
    }

    /** {@link #iterations} of a nest with an extent known only at run time (or past counting). */
    static final long UNKNOWN_WORK = Long.MAX_VALUE / 4;

    /**
     * {@link #iterations} as an expression of the run-time extents (an int64), or empty where an extent depends on a
     * loop variable (it cannot be evaluated before the loops run).
     */
    static Optional<PrimExpr> workExpr(Stmt s) {
        return switch (s) {
            case For f -> {
                boolean[] local = {false};
                dev.relayfarm.kernel.expr.PrimExprs.forEach(f.extent(), e -> {
                    if (e instanceof dev.relayfarm.kernel.expr.Var) local[0] = true;
                });
                if (local[0]) yield Optional.empty();
                yield workExpr(f.body()).map(b -> f.extent().mul(b));
            }
            case Seq q -> {
                PrimExpr sum = null;
                for (Stmt x : q.stmts()) {
                    Optional<PrimExpr> w = workExpr(x);
                    if (w.isEmpty()) yield Optional.empty();
                    sum = sum == null ? w.get() : sum.add(w.get());
                }
                yield Optional.of(sum == null ? PrimExpr.of(0) : sum);
            }
            case IfThenElse i -> {
                Optional<PrimExpr> a = workExpr(i.then()), b = i.otherwise().isPresent() ? workExpr(i.otherwise().get()) : Optional.of(PrimExpr.of(0));
                yield a.isPresent() && b.isPresent() ? Optional.of(a.get().max(b.get())) : Optional.empty();
            }
            case Allocate a -> workExpr(a.body());
            case Store st -> Optional.of(PrimExpr.of(1));
            case Evaluate e -> Optional.of(PrimExpr.of(1));
        };
    }

    private static long saturatingMultiply(long a, long b) {
        return b != 0 && a > (Long.MAX_VALUE / 4) / b ? Long.MAX_VALUE / 4 : a * b;
    }

    public static String emit(List<LoweredFunc> funcs) {
        StringBuilder out = new StringBuilder(PRELUDE);
        Set<String> names = new HashSet<>();
        for (LoweredFunc f : funcs) {
            if (!names.add(f.name())) throw new IllegalArgumentException("two kernels named " + f.name() + " in one module");
            out.append('\n');
            new FunctionPrinter().function(f, out);
        }
        return out.toString();
    }

    /** The C type of a scalar of {@code dtype}. */
    public static String cType(DType dtype) {
        if (dtype.lanes() != 1) throw new IllegalArgumentException("vector dtype " + dtype + " has no scalar C type");
        return switch (dtype.code()) {
            case FLOAT -> switch (dtype.bits()) {
                case 16 -> "uint16_t"; // storage bits; values are floats in expressions (HALF_PRELUDE)
                case 32 -> "float";
                case 64 -> "double";
                default -> throw new IllegalArgumentException("the C emitter does not support " + dtype);
            };
            case BFLOAT -> "uint16_t";
            case INT -> "int" + Math.max(8, dtype.bits()) + "_t"; // int4/int2 live in a byte
            case UINT -> "uint" + Math.max(8, dtype.bits()) + "_t";
            case FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT4_E2M1FN -> "uint8_t"; // codes; floats in expressions
            case BOOL -> "uint8_t";
            case STRING -> throw new IllegalArgumentException("string tensors are not supported by compiled artifacts: the C emitter has no type for " + dtype);
        };
    }

    /**
     * Identifiers a buffer or variable must not take: C keywords, the math functions and helpers the
     * body may call (a buffer named {@code sin} would shadow {@code sin()}), and the parameter array.
     */
    private static final Set<String> RESERVED = reserved();

    private static Set<String> reserved() {
        Set<String> r = new HashSet<>(List.of("args", "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
                "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof",
                "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "abort", "free", "fmod", "fmodf",
                "rf_maxf", "rf_minf", "rf_roundf", "rf_fbits", "rf_bitsf", "rf_odd", "rf_f2h", "rf_h2f", "rf_f2bf", "rf_bf2f", "rf_hr", "rf_bfr", "rf_d2h", "rf_d2bf", "rf_mf_mb", "rf_mf_bias", "rf_mf_max", "rf_mf_dec", "rf_mf_enc", "rf_mf_r", "rf_lowi", "rf_lowu", "ldexp", "ilogb", "rint", "isinf", "signbit", "memcpy", "nextafterf", "fabs", "rf_max", "rf_min", "rf_maxi", "rf_mini", "rf_alloc", "posix_memalign", "NAN", "INFINITY",
                "rf_c", "rf_vctx", "rf_begin", "rf_end", "rf_task", "rf_pool", "rf_parallel_for", "rf_pause", "rf_now_ns", "rf_run_chunks",
                "rf_worker", "rf_pool_stop", "rf_set_num_threads", "rf_kernel_fn", "rf_run_batch", "sysconf", "sched_yield", "clock_gettime"));
        for (dev.relayfarm.kernel.expr.MathFn fn : dev.relayfarm.kernel.expr.MathFn.values()) {
            r.add(fn.name().toLowerCase());
            r.add(fn.name().toLowerCase() + "f");
        }
        return Set.copyOf(r);
    }

    private static final class FunctionPrinter {
        /** A name in scope at a parallel loop, passed to the outlined body: its struct field type and how the body declares it. */
        private record Captured(String name, String fieldType, String declaration) {}

        private StringBuilder out;
        /** Outlined parallel loop bodies, printed before the kernel that calls them. */
        private final StringBuilder outlined = new StringBuilder();
        private final Map<Object, String> names = new HashMap<>();
        private final Set<String> used = new HashSet<>();
        private final List<Captured> scope = new ArrayList<>();
        private String kernel;
        private int depth = 1;
        private int parallelDepth;
        private int outlinedCount;

        FunctionPrinter() {
            used.addAll(RESERVED);
        }

        /** A unique C identifier per variable or buffer: a repeated name gets a numeric suffix. */
        private String name(Object key, String base) {
            return names.computeIfAbsent(key, k -> {
                String clean = base.replaceAll("[^A-Za-z0-9_]", "_");
                if (clean.isEmpty() || Character.isDigit(clean.charAt(0))) clean = "v" + clean;
                String n = clean;
                for (int i = 1; !used.add(n); i++) n = clean + "_" + i;
                return n;
            });
        }

        private String buf(Buffer b) {
            return name(b, b.name());
        }

        private String var(Var v) {
            return name(v, v.name());
        }

        void function(LoweredFunc f, StringBuilder module) {
            kernel = f.name();
            used.add("args");
            out = new StringBuilder();
            out.append("int32_t ").append(f.name()).append("(void* const* args) {\n");
            for (int i = 0; i < f.params().size(); i++) {
                Buffer b = f.params().get(i);
                String pointer = (i < f.numInputs() ? "const " : "") + cType(b.dtype()) + "*";
                line(pointer + " restrict " + buf(b) + " = (" + pointer + ")__builtin_assume_aligned(args[" + i + "], 64);");
                scope.add(pointerCapture(buf(b), pointer));
            }
            stmt(f.body());
            line("return 0;");
            out.append("}\n");
            module.append(outlined).append(out);
        }

        private static Captured loopVarCapture(String v) {
            return new Captured(v, "int64_t", "const int64_t " + v + " = rf_c->" + v + ";");
        }

        private static Captured pointerCapture(String name, String pointer) {
            return new Captured(name, pointer, pointer + " restrict " + name + " = (" + pointer + ")__builtin_assume_aligned(rf_c->" + name + ", 64);");
        }

        /**
         * {@code for (v = min; v < min + extent; ++v) body} across threads: the body becomes a function over
         * a range of {@code v}, every name in scope goes into its context struct, and the loop becomes one
         * {@code rf_parallel_for} call.
         */
        private void parallelFor(For f, String v, Optional<PrimExpr> work) {
            // rf_par<k>_<kernel>: unique in the module (kernel names are, and k has no underscore)
            String fn = name(new Object(), "rf_par" + outlinedCount++ + "_" + kernel);
            // never empty: the kernel's parameters (at least its output) are always in scope
            List<Captured> captured = List.copyOf(scope);
            StringBuilder struct = new StringBuilder("typedef struct {");
            for (Captured c : captured) struct.append(' ').append(c.fieldType()).append(' ').append(c.name()).append(';');
            outlined.append(struct.append(" } ").append(fn).append("_ctx;\n"));
            StringBuilder caller = out;
            int callerDepth = depth;
            out = new StringBuilder();
            depth = 1;
            // noinline: on one thread rf_parallel_for calls the body directly, and GCC inlined it into the kernel, where it
            // ran 2x slower (the PP-OCRv4 recognizer pinned at width 160: 22.1 ms on one thread, 10.7 ms with this)
            out.append("__attribute__((noinline)) static void ").append(fn).append("(void* rf_vctx, int64_t rf_begin, int64_t rf_end) {\n");
            line("const " + fn + "_ctx* rf_c = (const " + fn + "_ctx*) rf_vctx;");
            captured.forEach(c -> line(c.declaration()));
            String min = expr(f.min());
            line("for (int64_t " + v + " = " + min + " + rf_begin; " + v + " < " + min + " + rf_end; ++" + v + ") {");
            depth++;
            parallelDepth++;
            scoped(loopVarCapture(v), f.body());
            parallelDepth--;
            depth--;
            line("}");
            out.append("}\n");
            outlined.append(out);
            out = caller;
            depth = callerDepth;
            String fields = String.join(", ", captured.stream().map(Captured::name).toList());
            String extent = expr(Simplifier.simplify(f.extent()));
            if (work.isEmpty()) {
                line("{ " + fn + "_ctx rf_c = { " + fields + " }; rf_parallel_for(" + fn + ", &rf_c, " + extent + "); }");
            } else {
                // too little work to wake the thread pool: the outlined body over the whole range, on this thread
                line("{ " + fn + "_ctx rf_c = { " + fields + " }; if ((" + expr(Simplifier.simplify(work.get())) + ") >= " + MIN_PARALLEL_WORK + "LL) rf_parallel_for(" + fn
                        + ", &rf_c, " + extent + "); else " + fn + "(&rf_c, 0, " + extent + "); }");
            }
        }

        /** Prints {@code body} with {@code c} in scope (a loop variable or an allocation a parallel body may use). */
        private void scoped(Captured c, Stmt body) {
            scope.add(c);
            stmt(body);
            scope.removeLast();
        }

        private void line(String s) {
            out.append("  ".repeat(depth)).append(s).append('\n');
        }

        private void stmt(Stmt s) {
            switch (s) {
                case For f -> {
                    String v = var(f.var());
                    // Waking the thread pool costs microseconds, and far more when another process holds
                    // a core: a parallel loop nest with little work runs on the calling thread instead.
                    // Nested parallel loops run serially inside the outer one's range.
                    long work = f.kind() == ForKind.PARALLEL && parallelDepth == 0 ? iterations(f) : 0;
                    if (work >= MIN_PARALLEL_WORK) {
                        // extents known only at run time (a kernel over a dynamic size): the same rule, checked when it runs
                        parallelFor(f, v, work == UNKNOWN_WORK ? workExpr(f) : Optional.empty());
                        return;
                    }
                    switch (f.kind()) {
                        case PARALLEL -> line("/* serial: " + (parallelDepth > 0 ? "inside a parallel loop" : work + " iterations are too few to share") + " */");
                        case VECTORIZED -> line("#pragma omp simd");
                        case UNROLLED -> {
                            if (f.extent() instanceof IntImm n) line("#pragma GCC unroll " + Math.min(n.value(), 65534));
                        }
                        case SERIAL -> {}
                    }
                    line("for (int64_t " + v + " = " + expr(f.min()) + "; " + v + " < " + expr(Simplifier.simplify(f.min().add(f.extent()))) + "; ++" + v + ") {");
                    depth++;
                    scoped(loopVarCapture(v), f.body());
                    depth--;
                    line("}");
                }
                case Store st -> line(access(st.buffer(), st.indices()) + " = " + narrow(st.buffer().dtype(), st.value()) + ";");
                case Allocate a -> allocate(a);
                case IfThenElse i -> {
                    line("if (" + expr(i.condition()) + ") {");
                    depth++;
                    stmt(i.then());
                    depth--;
                    if (i.otherwise().isPresent()) {
                        line("} else {");
                        depth++;
                        stmt(i.otherwise().get());
                        depth--;
                    }
                    line("}");
                }
                case Seq q -> q.stmts().forEach(this::stmt);
                case Evaluate e -> line("(void)(" + expr(e.value()) + ");");
            }
        }

        private void allocate(Allocate a) {
            Buffer b = a.buffer();
            String t = cType(b.dtype()), n = buf(b);
            line("{");
            depth++;
            if (a.scope() == Scope.LOCAL) {
                String count = a.elements().map(e -> "(" + expr(Simplifier.simplify(e)) + ")").orElse(Long.toString(b.elementCount()));
                line(t + " " + n + "[" + count + "] __attribute__((aligned(64)));");
            } else {
                long elementBytes = Math.max(1, b.dtype().bits() / 8);
                String bytes = a.elements().isPresent()
                        ? "(size_t)((" + expr(Simplifier.simplify(a.elements().get())) + ") * " + elementBytes + " + 63) / 64 * 64"
                        : Long.toString((b.elementCount() * elementBytes + 63) / 64 * 64);
                line(t + "* restrict " + n + " = (" + t + "*)rf_alloc(" + bytes + ");");
                // An outlined parallel body returns void; a failed allocation there aborts.
                line(parallelDepth == 0 ? "if (" + n + " == NULL) return -1;" : "if (" + n + " == NULL) abort();");
            }
            scoped(pointerCapture(n, t + "*"), a.body());
            if (a.scope() == Scope.GLOBAL) line("free(" + n + ");");
            depth--;
            line("}");
        }

        /** {@code B[flat]} with the row-major offset of the indices, simplified. */
        private String access(Buffer b, List<PrimExpr> indices) {
            PrimExpr flat = new IntImm(0, DType.INT64);
            long stride = 1;
            for (int d = b.rank() - 1; d >= 0; d--) {
                flat = indices.get(d).mul(stride).add(flat);
                stride *= b.shape().get(d);
            }
            return buf(b) + "[" + expr(Simplifier.simplify(flat)) + "]";
        }

        private String expr(PrimExpr e) {
            return switch (e) {
                case IntImm i -> i.value() == Long.MIN_VALUE ? "INT64_MIN" : Long.toString(i.value()) + (i.value() > Integer.MAX_VALUE || i.value() < Integer.MIN_VALUE ? "LL" : "");
                case FloatImm f -> floatLiteral(f);
                case Var v -> var(v);
                case Load l -> widen(l.buffer().dtype(), access(l.buffer(), l.indices()));
                case TensorLoad l -> throw new IllegalStateException("tensor read of " + l.tensor().name() + " survived lowering");
                case Reduce r -> throw new IllegalStateException("reduction survived lowering");
                case Binary b -> binary(b);
                case Unary u -> "(" + switch (u.op()) {
                    case NEG -> "-";
                    case NOT -> "!";
                    case BITNOT -> "~";
                } + expr(u.a()) + ")";
                case Cast c -> cast(c);
                case BitCast c -> bitCast(c);
                case Select s -> "(" + expr(s.condition()) + " ? " + expr(s.then()) + " : " + expr(s.otherwise()) + ")";
                case Call c -> {
                    String fn = c.fn().name().toLowerCase() + (c.dtype().bits() == 32 || HalfFloats.isNarrow(c.dtype()) ? "f" : "");
                    // float32 round: the vectorizable equivalent (ROUND_PRELUDE)
                    if (fn.equals("roundf")) fn = "rf_roundf";
                    yield round(c.dtype(), fn + "(" + String.join(", ", c.args().stream().map(this::expr).toList()) + ")");
                }
            };
        }

        private String binary(Binary b) {
            String a = expr(b.a()), c = expr(b.b());
            DType t = b.a().dtype();
            boolean isFloat = t.isFloat();
            // float16/bfloat16 operands are C floats: the float32 functions serve them
            boolean single = t.bits() <= 32;
            String value = switch (b.op()) {
                case MIN, MAX -> {
                    String suffix = !isFloat ? "i" : single ? "f" : "";
                    yield "rf_" + b.op().name().toLowerCase() + suffix + "(" + a + ", " + c + ")";
                }
                case MOD -> isFloat ? "fmod" + (single ? "f" : "") + "(" + a + ", " + c + ")" : "(" + a + " % " + c + ")";
                default -> "(" + a + " " + b.op().symbol + " " + c + ")";
            };
            return round(b.dtype(), value);
        }

        /**
         * A float32-computed {@code value} of a narrow float dtype rounded to it (as the interpreter rounds each
         * result); a 4- or 2-bit integer wrapped to its width; others as they are.
         */
        private static String round(DType t, String value) {
            if (MiniFloats.isMini(t)) return "rf_mf_r(" + MiniFloats.format(t).ordinal() + ", " + value + ")";
            if (t.lanes() == 1 && t.isInteger() && t.bits() < 8) return lowInt(t, value);
            if (!HalfFloats.isHalf(t)) return value;
            return (t.code() == DType.Code.BFLOAT ? "rf_bfr(" : "rf_hr(") + value + ")";
        }

        /** {@code value} (any C integer or float) converted to the 4- or 2-bit integer {@code t}: truncated to int64, then wrapped. */
        private static String lowInt(DType t, String value) {
            return "((" + cType(t) + ")" + (t.code() == DType.Code.INT ? "rf_lowi" : "rf_lowu") + "((int64_t)" + value + ", " + t.bits() + "))";
        }

        /** A stored element of {@code t} as an expression value: narrow floats widen to float. */
        private static String widen(DType t, String stored) {
            if (MiniFloats.isMini(t)) return "rf_mf_dec(" + MiniFloats.format(t).ordinal() + ", " + stored + ")";
            if (!HalfFloats.isHalf(t)) return stored;
            return (t.code() == DType.Code.BFLOAT ? "rf_bf2f(" : "rf_h2f(") + stored + ")";
        }

        /** {@code v} as stored in a buffer of {@code t}: a narrow float converts to its bits from whatever dtype {@code v} has. */
        private String narrow(DType t, PrimExpr v) {
            if (v instanceof BitCast c && c.dtype().equals(t) && (MiniFloats.isMini(t) || HalfFloats.isHalf(t))) return bitCastBits(c);
            if (MiniFloats.isMini(t)) return miniBits(t, v, false, MiniFloats.RoundMode.UP);
            if (t.lanes() == 1 && t.isInteger() && t.bits() < 8) return lowInt(t, expr(v)); // e.g. a sum accumulated wider
            if (!HalfFloats.isHalf(t)) return expr(v);
            return toHalfBits(t, v);
        }

        /** The code of {@code v} rounded once to the 8/4-bit float {@code t} (from double: exact for every source). */
        private String miniBits(DType t, PrimExpr v, boolean saturate, MiniFloats.RoundMode mode) {
            return "rf_mf_enc(" + MiniFloats.format(t).ordinal() + ", (double)" + expr(v) + ", " + (saturate ? 1 : 0) + ", " + mode.ordinal() + ")";
        }

        /** The bits of {@code v} rounded once to the 16-bit float {@code t}. */
        private String toHalfBits(DType t, PrimExpr v) {
            boolean bf = t.code() == DType.Code.BFLOAT;
            DType from = v.dtype();
            // float32 and 16-bit float values are C floats (exact to narrow from); the rest go through double
            // (exact for every integer that does not overflow float16/bfloat16 anyway), narrowed in one rounding
            boolean viaFloat = from.lanes() == 1 && from.isFloat() && from.bits() <= 32;
            String x = expr(v);
            if (viaFloat) return (bf ? "rf_f2bf(" : "rf_f2h(") + x + ")";
            return (bf ? "rf_d2bf((double)" : "rf_d2h((double)") + x + ")";
        }

        private String cast(Cast c) {
            DType to = c.dtype(), from = c.value().dtype();
            if (MiniFloats.isMini(to)) {
                if (to.equals(from)) return expr(c.value());
                return widen(to, miniBits(to, c.value(), c.saturate(), c.roundMode()));
            }
            if (to.lanes() == 1 && to.isInteger() && to.bits() < 8 && !to.equals(from)) return lowInt(to, expr(c.value()));
            if (HalfFloats.isHalf(to)) {
                if (to.equals(from)) return expr(c.value());
                return widen(to, toHalfBits(to, c.value()));
            }
            // a 16-bit float value is already a C float: the cast from it is the float32 one
            return "((" + cType(to) + ")" + expr(c.value()) + ")";
        }

        /**
         * The bits of a value as another dtype of their width, through a union (C99 reads the other member's
         * bytes). A float16/bfloat16 value is a C float: its storage bits are the exact rounding back (values
         * come from loads of those bits), and bits read as one widen to a float again.
         */
        private String bitCast(BitCast c) {
            return widen(c.dtype(), bitCastBits(c));
        }

        /**
         * The bit cast as its target's storage (16 bits for float16/bfloat16). A 16-bit float read straight
         * from a buffer is its stored bits, and a 16-bit float bit cast stored straight into one is stored as
         * it is ({@link #narrow}): no float round trip, which would quiet a signalling NaN or canonicalize a
         * bfloat16 NaN payload, so a lone {@code reinterpret} keeps every bit as the interpreter does.
         */
        private String bitCastBits(BitCast c) {
            DType to = c.dtype(), from = c.value().dtype();
            // 8-bit floats likewise: a value is a C float, its storage the code (uint8_t)
            boolean narrowFrom = HalfFloats.isHalf(from) || MiniFloats.isMini(from);
            String bits;
            if (!narrowFrom) bits = expr(c.value());
            else if (c.value() instanceof Load l) bits = access(l.buffer(), l.indices());
            else if (MiniFloats.isMini(from)) bits = miniBits(from, c.value(), false, MiniFloats.RoundMode.UP);
            else bits = toHalfBits(from, c.value());
            String fromType = HalfFloats.isHalf(from) ? "uint16_t" : MiniFloats.isMini(from) ? "uint8_t" : cType(from);
            String toType = HalfFloats.isHalf(to) ? "uint16_t" : MiniFloats.isMini(to) ? "uint8_t" : cType(to);
            return "((union { " + fromType + " a; " + toType + " b; }){ .a = " + bits + " }).b";
        }

        private static String floatLiteral(FloatImm f) {
            double v = f.value();
            // a 16-bit float constant is its rounded value as a float literal (exact: float holds every one)
            // (not zero: float8_e8m0fnu has none, and a zero constant there is a comparison's or a select's zero)
            if (HalfFloats.isNarrow(f.dtype()) && v != 0) v = HalfFloats.roundNarrow(f.dtype(), v);
            if (Double.isNaN(v)) return "NAN";
            if (Double.isInfinite(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
            String text = f.dtype().bits() <= 32 ? Float.toString((float) v) + "f" : Double.toString(v);
            return v < 0 ? "(" + text + ")" : text;
        }
    }
}
