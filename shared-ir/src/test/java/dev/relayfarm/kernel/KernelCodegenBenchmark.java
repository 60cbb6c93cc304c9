package dev.relayfarm.kernel;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Function;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.compute.Conv2d;
import dev.relayfarm.kernel.compute.Dense;
import dev.relayfarm.kernel.loop.LoweredFunc;
import dev.relayfarm.kernel.lower.LoweredKernel;
import dev.relayfarm.kernel.lower.PrimitiveLowering;
import dev.relayfarm.kernel.schedule.Lowering;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.te.KernelDef;
import dev.relayfarm.kernel.te.Placeholder;
import dev.relayfarm.kernel.te.Te;
import dev.relayfarm.runtime.KernelLibrary;
import dev.relayfarm.runtime.NativeKernel;
import dev.relayfarm.text.RelayParser;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;

/**
 * GFLOP/s of the generated dense and conv2d kernels with their default schedules (not a unit test:
 * disabled unless asked for). Same shapes as {@code ops.KernelBenchmark} (the interpreter's):
 * <pre>
 * ./mvnw -q -o -pl shared-ir test -Dtest=KernelCodegenBenchmark -Drelayfarm.bench=true [-Drelayfarm.bench.seconds=2] [-Drelayfarm.bench.threads=2]
 * </pre>
 * Buffers are prepared once (no copies in the timed region); each case warms up, then the median and
 * best of the timed runs are reported (one multiply-add = 2 FLOP), plus GFLOP per CPU-second of the
 * process: on a shared, oversubscribed machine wall time mostly measures the neighbours.
 */
public final class KernelCodegenBenchmark {
    @org.junit.jupiter.api.Test
    @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void benchmark() {
        main(new String[] {System.getProperty("relayfarm.bench.seconds", "2"), System.getProperty("relayfarm.bench.threads", "2")});
    }

    /** {@code bytes}: what the kernel reads and writes at least, for those bound by memory; 0 when not reported. */
    private record Case(String label, LoweredFunc func, double flops, double bytes) {
        Case(String label, LoweredFunc func, double flops) {
            this(label, func, flops, 0);
        }
    }

    /**
     * Fused groups through {@link PrimitiveLowering} with the templates' default configs: NCHWc
     * convolutions (the layout alter-op-layout produces) with their bias+ReLU epilogue fused, the same
     * convolution alone plus the epilogue as a second kernel (unfused: the convolution's output is
     * written and read back), a first layer blocked NCHW3c, depthwise convolutions, and dense in place (batch 1) and
     * packed. Each line also gives its median as a percentage of this machine's FP32 peak for the thread count,
     * measured by {@link dev.relayfarm.kernel.codegen.MachinePeak} (register-only 8-lane FMA chains), and for kernels
     * that move more than they compute (depthwise), GB/s of the bytes they read and write at least against the
     * measured memory bandwidth (STREAM triad).
     */
    @org.junit.jupiter.api.Test
    @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void fusedGroups() {
        groups(Double.parseDouble(System.getProperty("relayfarm.bench.seconds", "2")), Integer.parseInt(System.getProperty("relayfarm.bench.threads", "1")));
    }

    private static String nchwcConv(int c, int hw, int f, int k, int stride, int pad, int bn, boolean epilogue) {
        int oh = (hw + 2 * pad - k) / stride + 1;
        String conv = "nn.contrib_conv2d_NCHWc(%x, %w, strides=[" + stride + ", " + stride + "], padding=[" + pad + ", " + pad + ", " + pad + ", " + pad
                + "], channels=" + f + ", kernel_size=[" + k + ", " + k + "], data_layout=\"NCHW" + bn + "c\", kernel_layout=\"OIHW" + bn + "i" + bn
                + "o\", out_layout=\"NCHW" + bn + "c\")";
        String params = "%x: Tensor[(1, " + c / bn + ", " + hw + ", " + hw + ", " + bn + "), float32], %w: Tensor[(" + f / bn + ", " + c / bn + ", " + k + ", " + k
                + ", " + bn + ", " + bn + "), float32]";
        if (!epilogue) return "fn (" + params + ", Primitive=1) { " + conv + " }";
        return "fn (" + params + ", %b: Tensor[(1, " + f / bn + ", 1, 1, " + bn + "), float32], Primitive=1) { %0 = " + conv + "; %1 = add(%0, %b); nn.relu(%1) }";
    }

    private static String biasRelu(int f, int oh, int bn) {
        return "fn (%y: Tensor[(1, " + f / bn + ", " + oh + ", " + oh + ", " + bn + "), float32], %b: Tensor[(1, " + f / bn + ", 1, 1, " + bn
                + "), float32], Primitive=1) { %1 = add(%y, %b); nn.relu(%1) }";
    }

    private static Case group(String label, String name, String text, double flops) {
        return group(label, name, text, flops, 0);
    }

    private static Case group(String label, String name, String text, double flops, double bytes) {
        Function fn = (Function) RelayParser.parseExpr(text);
        LoweredKernel k = PrimitiveLowering.lower(fn, name, Target.host(), Optional.empty());
        System.out.printf("  %-34s %s %s%n", label, k.workload(), k.config().toJson());
        return new Case(label, k.func(), flops, bytes);
    }

    public static void groups(double seconds, int threads) {
        CCompiler cc = CCompiler.host().orElseThrow(() -> new IllegalStateException("no C compiler found"));
        List<Case> cases = new ArrayList<>();
        int[][] convs = {{64, 56, 64, 3, 1, 1}, {256, 56, 64, 1, 1, 0}, {64, 56, 256, 1, 1, 0}, {128, 28, 128, 3, 1, 1}, {512, 7, 512, 3, 1, 1},
                {512, 13, 1008, 1, 1, 0}, {64, 55, 64, 1, 1, 0}, {16, 55, 64, 3, 1, 1}};
        for (int[] g : convs) {
            int c = g[0], hw = g[1], f = g[2], k = g[3], s = g[4], p = g[5], bn = 16;
            int oh = (hw + 2 * p - k) / s + 1;
            double flops = 2.0 * f * oh * oh * c * k * k;
            String id = c + "_" + hw + "_" + f + "_" + k;
            String label = "NCHW16c " + k + "x" + k + " " + c + "->" + f + " @" + hw;
            cases.add(group(label + " +bias+relu", "g_fused_" + id, nchwcConv(c, hw, f, k, s, p, bn, true), flops));
            cases.add(group(label + " alone", "g_conv_" + id, nchwcConv(c, hw, f, k, s, p, bn, false), flops));
            cases.add(group(label + " bias+relu kernel", "g_epi_" + id, biasRelu(f, oh, bn), 2.0 * f * oh * oh));
        }
        cases.add(group("NCHW conv 7x7/2 3->64 @224 +bias+relu", "g_conv1", """
                fn (%x: Tensor[(1, 3, 224, 224), float32], %w: Tensor[(64, 3, 7, 7), float32], %b: Tensor[(64, 1, 1), float32], Primitive=1) {
                  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3], channels=64, kernel_size=[7, 7]); %1 = add(%0, %b); nn.relu(%1) }""",
                2.0 * 64 * 112 * 112 * 3 * 49));
        cases.add(group("NCHW3c conv 7x7/2 3->64 @224 +bias+relu", "g_conv1_3c", """
                fn (%x: Tensor[(1, 1, 224, 224, 3), float32], %w: Tensor[(4, 1, 7, 7, 3, 16), float32], %b: Tensor[(1, 4, 1, 1, 16), float32], Primitive=1) {
                  %0 = nn.contrib_conv2d_NCHWc(%x, %w, strides=[2, 2], padding=[3, 3, 3, 3], channels=64, kernel_size=[7, 7], data_layout="NCHW3c",
                       kernel_layout="OIHW3i16o", out_layout="NCHW16c"); %1 = add(%0, %b); nn.relu(%1) }""",
                2.0 * 64 * 112 * 112 * 3 * 49));
        // depthwise (mobilenet / ppocr shapes): bytes moved = input + weight + bias + output, float32
        for (int[] g : new int[][] {{96, 80, 3, 1}, {192, 20, 5, 1}, {144, 56, 3, 2}, {272, 14, 3, 1}}) {
            int c = g[0], hw = g[1], k = g[2], s = g[3], p = k / 2, bn = 16;
            int oh = (hw + 2 * p - k) / s + 1;
            String dw = "fn (%x: Tensor[(1, " + c / bn + ", " + hw + ", " + hw + ", " + bn + "), float32], %w: Tensor[(" + c / bn + ", 1, " + k + ", " + k + ", 1, "
                    + bn + "), float32], %b: Tensor[(1, " + c / bn + ", 1, 1, " + bn + "), float32], Primitive=1) { %0 = nn.contrib_conv2d_NCHWc(%x, %w, strides=[" + s
                    + ", " + s + "], padding=[" + p + ", " + p + ", " + p + ", " + p + "], groups=" + c + ", channels=" + c + ", kernel_size=[" + k + ", " + k
                    + "], data_layout=\"NCHW16c\", kernel_layout=\"OIHW1i16o\", out_layout=\"NCHW16c\"); %1 = add(%0, %b); nn.relu(%1) }";
            cases.add(group("depthwise " + k + "x" + k + "/" + s + " " + c + " @" + hw + " +bias+relu", "g_dw_" + c + "_" + hw + "_" + k + "_" + s, dw,
                    2.0 * c * oh * oh * k * k, 4.0 * (c * hw * hw + c * k * k + c + c * oh * oh)));
        }
        for (int[] mkn : new int[][] {{1, 2048, 1000}, {1, 9216, 4096}, {64, 1024, 1024}, {256, 512, 512}}) {
            int m = mkn[0], kk = mkn[1], n = mkn[2];
            cases.add(group("dense " + m + "x" + kk + " * " + n + " +bias+relu", "g_dense_" + m + "_" + kk + "_" + n, "fn (%x: Tensor[(" + m + ", " + kk
                    + "), float32], %w: Tensor[(" + n + ", " + kk + "), float32], %b: Tensor[(" + n + "), float32], Primitive=1) { %0 = nn.dense(%x, %w, units=" + n
                    + "); %1 = nn.bias_add(%0, %b); nn.relu(%1) }", 2.0 * m * n * kk));
        }
        run(cc, cases, seconds, threads);
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        CCompiler cc = CCompiler.host().orElseThrow(() -> new IllegalStateException("no C compiler found"));
        List<Case> cases = List.of(
                dense("dense 1x2048 * 1000x2048", 1, 2048, 1000),
                dense("dense 64x1024 * 1024x1024", 64, 1024, 1024),
                dense("dense 256x512 * 512x512", 256, 512, 512),
                conv("resnet conv1 7x7/2", new int[] {1, 3, 224, 224}, new int[] {64, 3, 7, 7}, 2, 3),
                conv("resnet 3x3 64->64 @56", new int[] {1, 64, 56, 56}, new int[] {64, 64, 3, 3}, 1, 1),
                conv("resnet 1x1 256->64 @56", new int[] {1, 256, 56, 56}, new int[] {64, 256, 1, 1}, 1, 0),
                conv("resnet 1x1 64->256 @56", new int[] {1, 64, 56, 56}, new int[] {256, 64, 1, 1}, 1, 0),
                conv("resnet 3x3 128->128 /2", new int[] {1, 128, 56, 56}, new int[] {128, 128, 3, 3}, 2, 1),
                conv("resnet 3x3 512->512 @7", new int[] {1, 512, 7, 7}, new int[] {512, 512, 3, 3}, 1, 1),
                conv("densenet 1x1 512->128 @28", new int[] {1, 512, 28, 28}, new int[] {128, 512, 1, 1}, 1, 0));
        run(cc, cases, seconds, threads);
    }

    private static void run(CCompiler cc, List<Case> cases, double seconds, int threads) {
        long t0 = System.nanoTime();
        CModule module = new CModule(cases.stream().map(Case::func).toList());
        try (KernelLibrary lib = KernelLibrary.build(module, cc); Arena arena = Arena.ofConfined()) {
            System.out.printf("compiler=%s flags=%s threads=%d build+load %.1f s%n", cc.command(), cc.flags(), threads, (System.nanoTime() - t0) / 1e9);
            double peak = dev.relayfarm.kernel.codegen.MachinePeak.measure(threads).orElse(Double.NaN);
            double bandwidth = dev.relayfarm.kernel.codegen.MachinePeak.bandwidth(threads).orElse(Double.NaN);
            System.out.printf("measured on %d thread(s): FP32 FMA peak %.1f GFLOP/s, memory bandwidth %.1f GB/s%n", threads, peak, bandwidth);
            lib.setNumThreads(threads);
            Random rnd = new Random(1);
            for (Case c : cases) {
                NativeKernel k = lib.kernel(c.func().name());
                List<MemorySegment> bufs = new ArrayList<>();
                for (TensorSpec p : k.signature().params()) {
                    MemorySegment seg = arena.allocate(p.byteSize(), 64);
                    for (long i = 0; i < p.elementCount(); i++) seg.setAtIndex(ValueLayout.JAVA_FLOAT, i, rnd.nextFloat() - 0.5f);
                    bufs.add(seg);
                }
                long warmEnd = System.nanoTime() + (long) (seconds * 0.3e9);
                do k.invoke(bufs); while (System.nanoTime() < warmEnd);
                double[] times = new double[500];
                int runs = 0;
                long cpu0 = cpuNanos();
                long end = System.nanoTime() + (long) (seconds * 1e9);
                while (runs < times.length && (runs < 5 || System.nanoTime() < end)) {
                    long s = System.nanoTime();
                    k.invoke(bufs);
                    times[runs++] = (System.nanoTime() - s) / 1e9;
                }
                double cpuSeconds = (cpuNanos() - cpu0) / 1e9;
                double[] t = Arrays.copyOf(times, runs);
                Arrays.sort(t);
                double median = c.flops() / t[runs / 2] / 1e9;
                String bw = c.bytes() > 0 ? String.format(java.util.Locale.ROOT, "  %6.1f GB/s = %3.0f%% of bandwidth", c.bytes() / t[runs / 2] / 1e9,
                        100 * c.bytes() / t[runs / 2] / 1e9 / bandwidth) : "";
                System.out.printf(java.util.Locale.ROOT, "%-44s %8.3f ms median  %7.2f GFLOP/s median = %5.1f%% of peak  %7.2f GFLOP/s best  %7.2f GFLOP/cpu-s  (%d runs)%s%n",
                        c.label(), t[runs / 2] * 1e3, median, 100 * median / peak, c.flops() / t[0] / 1e9, c.flops() * runs / cpuSeconds / 1e9, runs, bw);
            }
        }
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static Case dense(String label, int m, int k, int n) {
        Placeholder d = Te.placeholder("data", List.of(m, k), DType.FLOAT32), w = Te.placeholder("weight", List.of(n, k), DType.FLOAT32);
        Dense.Def def = Dense.compute(d, w);
        String name = "bench_dense_" + m + "_" + k + "_" + n;
        return new Case(label, Lowering.lower(new KernelDef(name, List.of(d, w), List.of(def.out())), Dense.defaultSchedule(def)), 2.0 * m * n * k);
    }

    private static Case conv(String label, int[] x, int[] w, int stride, int pad) {
        Placeholder d = Te.placeholder("data", Arrays.stream(x).boxed().toList(), DType.FLOAT32);
        Placeholder wt = Te.placeholder("weight", Arrays.stream(w).boxed().toList(), DType.FLOAT32);
        Conv2d.Def def = Conv2d.compute(d, wt, Conv2d.Params.of(stride, pad), 1);
        List<Integer> o = def.out().shape();
        String name = "bench_conv_" + String.join("_", Arrays.stream(x).mapToObj(Integer::toString).toList()) + "_" + w[0] + "_" + w[2] + "_" + stride;
        double flops = 2.0 * o.get(0) * o.get(1) * o.get(2) * o.get(3) * w[1] * w[2] * w[3];
        return new Case(label, Lowering.lower(new KernelDef(name, List.of(d, wt), List.of(def.out())), Conv2d.defaultSchedule(def)), flops);
    }
}
