package dev.relayfarm.ops;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ops.registry.OpRegistry;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Throughput of the conv2d and dense reference kernels on ResNet-50-sized shapes. Not part of the
 * test run (the class name does not match surefire's patterns and the entry point is disabled unless
 * asked for); run it by hand, it takes about a minute:
 * <pre>
 * ./mvnw -q -o -pl shared-ir test -Dtest=KernelBenchmark -Drelayfarm.bench=true [-Drelayfarm.bench.seconds=3]
 * </pre>
 * or, after {@code ./mvnw -q -o -pl shared-ir test-compile}, with {@code main}:
 * {@code java -cp shared-ir/target/classes:shared-ir/target/test-classes dev.relayfarm.ops.KernelBenchmark [seconds]}.
 * Each case goes through {@link OpDef#compute} as the interpreter calls it (attribute parsing, layout
 * handling and output allocation included), warms up, then reports the median and best GFLOP/s
 * (one multiply-add = 2 FLOP) over the timed runs, plus GFLOP per CPU-second of the whole process
 * (all threads): on a shared, oversubscribed machine wall time mostly measures the neighbours, while
 * the CPU-time figure still says how efficient the loops are per core.
 */
public final class KernelBenchmark {
    @org.junit.jupiter.api.Test
    @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void benchmark() {
        main(new String[] {System.getProperty("relayfarm.bench.seconds", "3")});
    }

    private record Case(String label, String op, Attrs attrs, int[][] shapes, double flops) {}

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        System.out.printf("cores=%d java=%s%n", Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        List<Case> cases = List.of(
                conv("resnet conv1 7x7/2", new int[] {1, 3, 224, 224}, new int[] {64, 3, 7, 7}, 2, 3, 1),
                conv("resnet 3x3 64->64 @56", new int[] {1, 64, 56, 56}, new int[] {64, 64, 3, 3}, 1, 1, 1),
                conv("resnet 1x1 256->64 @56", new int[] {1, 256, 56, 56}, new int[] {64, 256, 1, 1}, 1, 0, 1),
                conv("resnet 1x1 64->256 @56", new int[] {1, 64, 56, 56}, new int[] {256, 64, 1, 1}, 1, 0, 1),
                conv("resnet 3x3 128->128 /2", new int[] {1, 128, 56, 56}, new int[] {128, 128, 3, 3}, 2, 1, 1),
                conv("resnet 3x3 512->512 @7", new int[] {1, 512, 7, 7}, new int[] {512, 512, 3, 3}, 1, 1, 1),
                conv("densenet 1x1 512->128 @28", new int[] {1, 512, 28, 28}, new int[] {128, 512, 1, 1}, 1, 0, 1),
                conv("depthwise 3x3 32 @112", new int[] {1, 32, 112, 112}, new int[] {32, 1, 3, 3}, 1, 1, 32),
                dense("dense 1x2048 * 1000x2048", 1, 2048, 1000),
                dense("dense 64x1024 * 1024x1024", 64, 1024, 1024));
        Random rnd = new Random(1);
        for (Case c : cases) {
            NDArray[] inputs = Arrays.stream(c.shapes()).map(s -> random(rnd, s)).toArray(NDArray[]::new);
            OpDef<?> def = OpRegistry.get(c.op());
            List<NDArray> in = List.of(inputs);
            long warmEnd = System.nanoTime() + (long) (seconds * 0.4e9);
            while (System.nanoTime() < warmEnd) def.compute(in, c.attrs());
            double[] times = new double[200];
            int runs = 0;
            long cpu0 = cpuNanos();
            long end = System.nanoTime() + (long) (seconds * 1e9);
            while (runs < times.length && (runs < 3 || System.nanoTime() < end)) {
                long t0 = System.nanoTime();
                def.compute(in, c.attrs());
                times[runs++] = (System.nanoTime() - t0) / 1e9;
            }
            double cpuSeconds = (cpuNanos() - cpu0) / 1e9;
            double[] t = Arrays.copyOf(times, runs);
            Arrays.sort(t);
            System.out.printf("%-28s %8.2f ms median  %6.2f GFLOP/s median  %6.2f GFLOP/s best  %6.2f GFLOP/cpu-s  (%d runs)%n",
                    c.label(), t[runs / 2] * 1e3, c.flops() / t[runs / 2] / 1e9, c.flops() / t[0] / 1e9,
                    c.flops() * runs / cpuSeconds / 1e9, runs);
        }
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static Case conv(String label, int[] x, int[] w, int stride, int pad, int groups) {
        int oh = (x[2] + 2 * pad - w[2]) / stride + 1, ow = (x[3] + 2 * pad - w[3]) / stride + 1;
        double flops = 2.0 * x[0] * w[0] * oh * ow * w[1] * w[2] * w[3];
        Attrs a = new Attrs(java.util.Map.of("strides", AttrValue.ints(stride, stride), "padding", AttrValue.ints(pad, pad),
                "groups", AttrValue.of((long) groups)));
        return new Case(label, "nn.conv2d", a, new int[][] {x, w}, flops);
    }

    private static Case dense(String label, int m, int k, int n) {
        return new Case(label, "nn.dense", Attrs.EMPTY, new int[][] {{m, k}, {n, k}}, 2.0 * m * n * k);
    }

    private static NDArray random(Random rnd, int[] shape) {
        float[] f = new float[NDArray.elementCount(DType.FLOAT32, shape)];
        for (int i = 0; i < f.length; i++) f[i] = rnd.nextFloat() - 0.5f;
        return NDArray.wrap(DType.FLOAT32, shape, f);
    }
}
