package dev.relayfarm.kernel.compute;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.ir.Tuple;
import dev.relayfarm.ir.TupleType;
import dev.relayfarm.ir.Type;
import dev.relayfarm.ir.Var;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.schedule.Lowering;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.kernel.te.Tensor;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.runtime.KernelLibrary;
import dev.relayfarm.runtime.NativeKernel;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.InferResult;
import dev.relayfarm.types.OpResolver;
import dev.relayfarm.types.TypeInference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Single-operator kernels written as Relay text, e.g.
 * {@code fn (%x: Tensor[(3, 4), float32]) { clip(%x, a_min=-0.25f, a_max=0.3f) }}: the call's
 * operator, attributes and (type-checked) input/output types go through {@link OpComputes}, the
 * kernel gets {@link OpComputes#defaultSchedule}, and all kernels of a test class are compiled into
 * ONE C module (gcc per kernel would be slow). Each kernel then runs on random inputs and is compared
 * with the interpreter's kernel of the operator: floats within rtol 1e-5 / atol 1e-6 (NaN equals
 * NaN), integers and bools exactly.
 */
final class OpKernelCases {
    /** Makes one input array. */
    @FunctionalInterface
    interface Gen {
        NDArray make(Random rnd, DType dtype, int[] shape);
    }

    private record Case(String name, String text, String op, Attrs attrs, List<NDArray> fixed, List<Gen> gens, List<Placeholder> params,
                        LoweredFunc func) {}

    private final Map<String, Case> cases = new LinkedHashMap<>();
    private final List<String> buildFailures = new ArrayList<>();
    private KernelLibrary lib;
    private boolean exact;
    private boolean bits;

    /** Floats must then equal the interpreter's bit for bit (so -0.0 differs from 0.0), not within a tolerance. */
    OpKernelCases exact() {
        exact = true;
        return this;
    }

    /**
     * 16-bit float outputs may differ from the interpreter's by one ulp of their format (rounded from
     * float32 and float64 results that differ by float32 rounding): rtol 2^-7 for bfloat16, 2^-10 for float16.
     */
    OpKernelCases halfTolerance() {
        halfTolerance = true;
        return this;
    }

    private boolean halfTolerance;

    /** Outputs must equal the interpreter's storage bytes: {@link #exact()}, and NaN payloads too. */
    OpKernelCases bitExact() {
        bits = true;
        return exact();
    }

    /**
     * Adds a kernel for the single call in {@code relayFunction}. {@code gens} (optional, one per
     * flattened input, null = default) override the random inputs: floats in [-2, 2), integers in
     * [-20, 20] (unsigned [0, 40]), bools 0/1.
     */
    OpKernelCases add(String relayFunction, Gen... gens) {
        String name = "k" + (cases.size() + buildFailures.size());
        try {
            Function f = (Function) RelayParser.parseExpr(relayFunction);
            InferResult types = TypeInference.inferExpr(f, OpResolver.REGISTRY);
            Function typed = types.module().main().orElseThrow();
            if (!(typed.body() instanceof Call call) || !(call.callee() instanceof Op op)) throw new IllegalArgumentException("the body must be one operator call");
            List<Placeholder> params = new ArrayList<>();
            for (Expr arg : call.args()) {
                List<Expr> parts = arg instanceof Tuple t ? t.fields() : List.of(arg);
                for (Expr p : parts) {
                    if (!(p instanceof Var v)) throw new IllegalArgumentException("arguments must be parameters or tuples of parameters");
                    flattenParam(v.name(), types.typeOf(p), params);
                }
            }
            Type out = types.typeOf(call);
            List<Compute> outs = OpComputes.compute(op.name(), new ArrayList<Tensor>(params), call.attrs(), out);
            String kname = name + "_" + op.name().replaceAll("[^A-Za-z0-9]", "_");
            LoweredFunc func = Lowering.lower(new KernelDef(kname, params, outs), OpComputes.defaultSchedule(outs));
            cases.put(kname, new Case(kname, relayFunction, op.name(), call.attrs(), null, Arrays.asList(gens), params, func));
        } catch (RuntimeException e) {
            buildFailures.add(relayFunction + "\n    -> " + e);
        }
        return this;
    }

    private static void flattenParam(String name, Type t, List<Placeholder> out) {
        switch (t) {
            case TensorType tt -> out.add(Te.placeholder("p" + out.size() + "_" + name.replaceAll("[^A-Za-z0-9]", "_"), OpCall.staticShape("param", tt), tt.dtype()));
            case TupleType tu -> {
                for (Type f : tu.fields()) flattenParam(name, f, out);
            }
            default -> throw new IllegalArgumentException("parameter %" + name + " has type " + t);
        }
    }

    int size() {
        return cases.size();
    }

    /** Compiles every kernel in one module; the kernels that could not be built are reported by {@link #check}. */
    void build() {
        List<LoweredFunc> funcs = cases.values().stream().map(Case::func).toList();
        lib = KernelLibrary.build(new CModule(funcs), CCompiler.host().orElseThrow());
    }

    void close() {
        if (lib != null) lib.close();
    }

    /** Runs every kernel against the interpreter; returns the failures (build failures included). */
    List<String> check(long seed) {
        List<String> failures = new ArrayList<>(buildFailures);
        for (Case c : cases.values()) {
            try {
                NativeKernel k = lib.kernel(c.name());
                Random rnd = new Random(seed ^ c.text().hashCode());
                List<NDArray> in = new ArrayList<>();
                for (int i = 0; i < c.params().size(); i++) {
                    Placeholder p = c.params().get(i);
                    Gen g = i < c.gens().size() && c.gens().get(i) != null ? c.gens().get(i) : OpKernelCases::defaultGen;
                    in.add(g.make(rnd, p.dtype(), p.shape().stream().mapToInt(Integer::intValue).toArray()));
                }
                List<NDArray> expected = OpRegistry.get(c.op()).compute(in, c.attrs());
                List<NDArray> actual = k.run(in);
                if (expected.size() != actual.size()) throw new AssertionError(expected.size() + " outputs expected, got " + actual.size());
                for (int i = 0; i < expected.size(); i++) {
                    try {
                        compare(i, expected.get(i), actual.get(i), exact);
                    } catch (AssertionError e) {
                        throw new AssertionError(e.getMessage() + (in.size() == 1 && in.getFirst().elementCount() == expected.get(i).elementCount()
                                ? " (input element " + in.getFirst().getDouble(Integer.parseInt(e.getMessage().replaceAll(".* element (\\d+):.*", "$1"))) + ")" : ""));
                    }
                    if (bits) compareBits(i, expected.get(i), actual.get(i), in);
                }
            } catch (RuntimeException | AssertionError e) {
                failures.add(c.text() + "\n    -> " + e.getMessage());
            }
        }
        return failures;
    }

    /** Fails listing every kernel that differs from the interpreter (or could not be built). */
    void assertAllMatch(long seed) {
        List<String> failures = check(seed);
        assertTrue(failures.isEmpty(), failures.size() + " of " + size() + " kernels differ:\n" + String.join("\n", failures));
    }

    private boolean halfToleranceFor(DType t) {
        return halfTolerance && dev.relayfarm.ir.HalfFloats.isHalf(t);
    }

    private void compare(int output, NDArray e, NDArray a, boolean exact) {
        if (!Arrays.equals(e.shape(), a.shape())) throw new AssertionError("output " + output + ": shape " + Arrays.toString(a.shape()) + ", expected " + Arrays.toString(e.shape()));
        if (!e.dtype().equals(a.dtype())) throw new AssertionError("output " + output + ": dtype " + a.dtype() + ", expected " + e.dtype());
        int n = e.elementCount();
        for (int i = 0; i < n; i++) {
            if (e.dtype().isFloat()) {
                double x = e.getDouble(i), y = a.getDouble(i);
                double rtol = !halfToleranceFor(e.dtype()) ? 1e-5 : e.dtype().code() == DType.Code.BFLOAT ? 0x1p-7 : 0x1p-10;
                boolean ok = exact ? Double.compare(x, y) == 0 : Double.isNaN(x) ? Double.isNaN(y) : x == y || Math.abs(x - y) <= 1e-6 + rtol * Math.abs(x);
                if (!ok) throw new AssertionError("output " + output + " element " + i + ": got " + y + ", expected " + x);
            } else if (e.getLong(i) != a.getLong(i)) {
                throw new AssertionError("output " + output + " element " + i + ": got " + a.getLong(i) + ", expected " + e.getLong(i));
            }
        }
    }

    private static void compareBits(int output, NDArray e, NDArray a, List<NDArray> in) {
        byte[] x = e.toBytes(), y = a.toBytes();
        int w = e.dtype().storageBytes();
        for (int i = 0; i < x.length; i++) {
            if (x[i] != y[i]) {
                int el = i / w;
                String input = in.isEmpty() || in.getFirst().elementCount() <= el ? "" : " (first input " + in.getFirst().getDouble(el) + ")";
                throw new AssertionError("output " + output + " element " + el + input + ": bytes differ, got " + hex(y, el * w, w) + ", expected " + hex(x, el * w, w));
            }
        }
    }

    private static String hex(byte[] b, int from, int n) {
        StringBuilder s = new StringBuilder("0x");
        for (int i = from + n - 1; i >= from; i--) s.append(String.format("%02x", b[i] & 0xff));
        return s.toString();
    }

    static NDArray defaultGen(Random rnd, DType t, int[] shape) {
        if (t.isFloat()) return uniform(-2, 2).make(rnd, t, shape);
        if (t.isBool()) return ints(0, 1).make(rnd, t, shape);
        return t.code() == DType.Code.UINT ? ints(0, 40).make(rnd, t, shape) : ints(-20, 20).make(rnd, t, shape);
    }

    static Gen uniform(double lo, double hi) {
        return (rnd, t, shape) -> {
            double[] v = new double[NDArray.elementCount(t, shape)];
            for (int i = 0; i < v.length; i++) v[i] = lo + (hi - lo) * rnd.nextDouble();
            return NDArray.fromDoubles(t, shape, v);
        };
    }

    /** Uniform integers in [lo, hi]. */
    static Gen ints(long lo, long hi) {
        return (rnd, t, shape) -> {
            long[] v = new long[NDArray.elementCount(t, shape)];
            for (int i = 0; i < v.length; i++) v[i] = lo + (long) Math.floor(rnd.nextDouble() * (hi - lo + 1));
            return t.isFloat() ? NDArray.fromDoubles(t, shape, Arrays.stream(v).asDoubleStream().toArray()) : NDArray.fromLongs(t, shape, v);
        };
    }

    /** Like {@code g} but zeros replaced by one (divisors). */
    static Gen nonzero(Gen g) {
        return (rnd, t, shape) -> {
            NDArray a = g.make(rnd, t, shape);
            for (int i = 0; i < a.elementCount(); i++) {
                if (t.isFloat() ? a.getDouble(i) == 0 : a.getLong(i) == 0) {
                    if (t.isFloat()) a.setDouble(i, 1);
                    else a.setLong(i, 1);
                }
            }
            return a;
        };
    }
}
