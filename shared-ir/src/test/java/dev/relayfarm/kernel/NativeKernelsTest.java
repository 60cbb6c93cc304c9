package dev.relayfarm.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.compute.Conv2d;
import dev.relayfarm.kernel.compute.Dense;
import dev.relayfarm.kernel.compute.Elementwise;
import dev.relayfarm.kernel.compute.Reductions;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.schedule.Lowering;
import dev.relayfarm.kernel.schedule.Primitive;
import dev.relayfarm.kernel.schedule.Schedule;
import dev.relayfarm.kernel.te.Compute;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.runtime.KernelLibrary;
import dev.relayfarm.runtime.NativeKernel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every kernel here is really compiled (one C module for the whole class, cached by content hash)
 * and run through the FFM runtime, and its result is compared with the interpreter's reference
 * kernel on random inputs. Skipped, with a message, when no C compiler is installed.
 */
class NativeKernelsTest {
    /** A kernel under test: its lowered form and how to compute the expected outputs. */
    private record Case(LoweredFunc func, Function<List<NDArray>, List<NDArray>> reference) {}

    private static final Map<String, Case> CASES = new LinkedHashMap<>();
    private static KernelLibrary lib;

    @BeforeAll
    static void build() {
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler found (set $CC or install gcc/clang/cc): native kernel tests skipped");
        // element-wise
        for (String op : List.of("nn.relu", "exp", "tanh", "sigmoid")) {
            Placeholder x = f32("X", 3, 70);
            Compute y = Elementwise.unary(op, x);
            add(op, new KernelDef(op.replace('.', '_') + "_k", List.of(x), List.of(y)), Elementwise.injectiveSchedule(y), in -> ref(op, Attrs.EMPTY, in));
        }
        Placeholder cx = f32("X", 5, 13);
        Compute clip = Elementwise.clip(cx, -0.25, 0.3);
        add("clip", new KernelDef("clip_k", List.of(cx), List.of(clip)), Elementwise.injectiveSchedule(clip),
                in -> ref("clip", attrs("a_min", AttrValue.of(-0.25), "a_max", AttrValue.of(0.3)), in));
        Placeholder a = f32("A", 4, 1, 5), b = f32("B", 3, 5);
        Compute add = Elementwise.binary("add", a, b);
        add("add_broadcast", new KernelDef("add_k", List.of(a, b), List.of(add)), Elementwise.injectiveSchedule(add), in -> ref("add", Attrs.EMPTY, in));
        Placeholder m1 = f32("A", 2, 3, 40), m2 = f32("B", 2, 3, 40);
        Compute mul = Elementwise.binary("multiply", m1, m2);
        add("multiply", new KernelDef("mul_k", List.of(m1, m2), List.of(mul)), Elementwise.injectiveSchedule(mul), in -> ref("multiply", Attrs.EMPTY, in));
        Placeholder bx = f32("X", 2, 16, 5, 7), bias = f32("bias", 16);
        Compute ba = Elementwise.biasAdd(bx, bias, 1);
        add("bias_add", new KernelDef("bias_add_k", List.of(bx, bias), List.of(ba)), Elementwise.injectiveSchedule(ba), in -> ref("nn.bias_add", Attrs.EMPTY, in));
        // reductions
        Placeholder sx = f32("X", 4, 6, 5);
        Compute s1 = Reductions.sum(sx, List.of(1), false);
        add("sum_axis1", new KernelDef("sum1_k", List.of(sx), List.of(s1)), Reductions.defaultSchedule(s1, false),
                in -> ref("sum", attrs("axis", AttrValue.ints(1)), in));
        Placeholder sy = f32("X", 8, 33);
        Compute s2 = Reductions.sum(sy, List.of(-1), true);
        add("sum_last_keepdims", new KernelDef("sum2_k", List.of(sy), List.of(s2)), Reductions.defaultSchedule(s2, true),
                in -> ref("sum", attrs("axis", AttrValue.ints(-1), "keepdims", AttrValue.of(true)), in));
        // dense: default schedule on dividing and ragged shapes, and the naive nest
        for (int[] mkn : new int[][] {{16, 64, 32}, {5, 37, 21}, {1, 50, 10}}) {
            Placeholder d = f32("data", mkn[0], mkn[1]), w = f32("weight", mkn[2], mkn[1]);
            Dense.Def def = Dense.compute(d, w);
            String name = "dense_" + mkn[0] + "x" + mkn[1] + "x" + mkn[2];
            add(name, new KernelDef(name, List.of(d, w), List.of(def.out())), Dense.defaultSchedule(def), in -> ref("nn.dense", Attrs.EMPTY, in));
            add(name + "_naive", new KernelDef(name + "_naive", List.of(d, w), List.of(def.out())), Schedule.NAIVE, in -> ref("nn.dense", Attrs.EMPTY, in));
        }
        // conv2d NCHW: default schedule and naive nest on a few geometries
        int[][] convs = { // n, c, h, w, f, k, stride, pad, dilation
                {1, 8, 10, 10, 16, 3, 1, 1, 1}, {2, 3, 11, 9, 5, 3, 2, 1, 1}, {1, 16, 7, 7, 8, 1, 1, 0, 1}, {1, 4, 12, 12, 6, 3, 1, 2, 2}};
        for (int[] g : convs) {
            Placeholder x = f32("data", g[0], g[1], g[2], g[3]), w = f32("weight", g[4], g[1], g[5], g[5]);
            Conv2d.Def def = Conv2d.compute(x, w, new Conv2d.Params(g[6], g[6], g[7], g[7], g[7], g[7], g[8], g[8]), 1);
            Attrs at = attrs("strides", AttrValue.ints(g[6], g[6]), "padding", AttrValue.ints(g[7], g[7]), "dilation", AttrValue.ints(g[8], g[8]));
            String name = "conv_" + String.join("_", Arrays.stream(g).mapToObj(Integer::toString).toList());
            add(name, new KernelDef(name, List.of(x, w), List.of(def.out())), Conv2d.defaultSchedule(def), in -> ref("nn.conv2d", at, in));
            add(name + "_naive", new KernelDef(name + "_naive", List.of(x, w), List.of(def.out())), Schedule.NAIVE, in -> ref("nn.conv2d", at, in));
        }
        // a hand schedule: split + reorder + vectorize + parallel must give the naive numbers
        matmulSchedules();
        List<LoweredFunc> funcs = CASES.values().stream().map(Case::func).toList();
        lib = KernelLibrary.build(new CModule(funcs), CCompiler.host().orElseThrow());
    }

    private static void matmulSchedules() {
        Placeholder a = f32("A", 12, 20), b = f32("B", 20, 24);
        var r = Te.reduceAxis("rk", 20);
        Compute c = Te.compute("C", List.of(12, 24), ix -> Te.sum(a.at(ix.get(0), r.var()).mul(b.at(r.var(), ix.get(1))), r));
        Function<List<NDArray>, List<NDArray>> reference = in -> ref("nn.matmul", Attrs.EMPTY, in);
        add("matmul_naive", new KernelDef("matmul_naive", List.of(a, b), List.of(c)), Schedule.NAIVE, reference);
        add("matmul_scheduled", new KernelDef("matmul_scheduled", List.of(a, b), List.of(c)), Schedule.of(
                new Primitive.Split("C", "j", 8), new Primitive.Split("C", "i", 5), new Primitive.Reorder("C", List.of("i_o", "j_o", "rk", "i_i", "j_i")),
                new Primitive.Vectorize("C", "j_i"), new Primitive.Parallel("C", "i_o"), new Primitive.Unroll("C", "i_i")), reference);
    }

    private static void add(String name, KernelDef def, Schedule s, Function<List<NDArray>, List<NDArray>> reference) {
        CASES.put(name, new Case(Lowering.lower(def, s), reference));
    }

    @AfterAll
    static void close() {
        if (lib != null) lib.close();
    }

    private static Placeholder f32(String name, Integer... shape) {
        return Te.placeholder(name, List.of(shape), DType.FLOAT32);
    }

    private static Attrs attrs(Object... kv) {
        Map<String, AttrValue> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], (AttrValue) kv[i + 1]);
        return new Attrs(m);
    }

    private static List<NDArray> ref(String op, Attrs attrs, List<NDArray> in) {
        return OpRegistry.get(op).compute(in, attrs);
    }

    private static NDArray random(Random rnd, List<Integer> shape) {
        int[] s = shape.stream().mapToInt(Integer::intValue).toArray();
        float[] f = new float[NDArray.elementCount(DType.FLOAT32, s)];
        for (int i = 0; i < f.length; i++) f[i] = rnd.nextFloat() * 4 - 2;
        return NDArray.wrap(DType.FLOAT32, s, f);
    }

    private static List<NDArray> randomInputs(NativeKernel k, long seed) {
        Random rnd = new Random(seed);
        List<NDArray> in = new ArrayList<>();
        for (var p : k.signature().inputs()) in.add(random(rnd, p.shape()));
        return in;
    }

    private static void assertClose(String name, NDArray expected, NDArray actual) {
        assertArrayEquals(expected.shape(), actual.shape(), name + ": shape");
        float[] e = expected.floatData(), a = actual.floatData();
        for (int i = 0; i < e.length; i++) {
            double tol = 1e-4 * (1 + Math.abs(e[i]));
            if (!(Math.abs(e[i] - a[i]) <= tol)) throw new AssertionError(name + ": element " + i + " expected " + e[i] + " got " + a[i]);
        }
    }

    @Test
    void everyKernelMatchesTheInterpreter() {
        List<String> checked = new ArrayList<>();
        for (Map.Entry<String, Case> c : CASES.entrySet()) {
            NativeKernel k = lib.kernel(c.getValue().func().name());
            List<NDArray> in = randomInputs(k, c.getKey().hashCode());
            List<NDArray> expected = c.getValue().reference().apply(in);
            List<NDArray> actual = k.run(in);
            assertEquals(expected.size(), actual.size());
            for (int i = 0; i < expected.size(); i++) assertClose(c.getKey(), expected.get(i), actual.get(i));
            checked.add(c.getKey());
        }
        assertTrue(checked.size() >= 25, "checked " + checked);
    }

    @Test
    void scheduledMatmulGivesTheNaiveNumbers() {
        NativeKernel naive = lib.kernel("matmul_naive"), scheduled = lib.kernel("matmul_scheduled");
        List<NDArray> in = randomInputs(naive, 7);
        float[] n = naive.run(in).getFirst().floatData(), s = scheduled.run(in).getFirst().floatData();
        // Same summation order per element; only FMA contraction may differ.
        for (int i = 0; i < n.length; i++) assertEquals(n[i], s[i], 1e-5 * (1 + Math.abs(n[i])), "element " + i);
    }

    @Test
    void wrongInputsAreClearErrors() {
        NativeKernel k = lib.kernel("dense_16x64x32");
        Random rnd = new Random(1);
        NDArray good = random(rnd, List.of(16, 64)), w = random(rnd, List.of(32, 64));
        IllegalArgumentException shape = assertThrows(IllegalArgumentException.class, () -> k.run(List.of(good, random(rnd, List.of(64, 32)))));
        assertEquals("kernel dense_16x64x32: input 1 (weight) must have shape [32, 64], got [64, 32]", shape.getMessage());
        IllegalArgumentException dtype = assertThrows(IllegalArgumentException.class, () -> k.run(List.of(NDArray.zeros(DType.FLOAT64, 16, 64), w)));
        assertEquals("kernel dense_16x64x32: input 0 (data) must be float32, got float64", dtype.getMessage());
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class, () -> k.run(List.of(good)));
        assertEquals("kernel dense_16x64x32 takes 2 inputs [data, weight], got 1", count.getMessage());
        assertThrows(IllegalArgumentException.class, () -> lib.kernel("nope"));
    }

    @Test
    void threadCountIsSettable() {
        lib.setNumThreads(1);
        NativeKernel k = lib.kernel("conv_1_8_10_10_16_3_1_1_1");
        List<NDArray> in = randomInputs(k, 3);
        float[] one = k.run(in).getFirst().floatData();
        lib.setNumThreads(2);
        float[] two = k.run(in).getFirst().floatData();
        assertArrayEquals(one, two, "thread count must not change the numbers");
        assertThrows(IllegalArgumentException.class, () -> lib.setNumThreads(-1));
    }
}
