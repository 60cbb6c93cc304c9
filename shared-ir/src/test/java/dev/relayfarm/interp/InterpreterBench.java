package dev.relayfarm.interp;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ops.NoAttrs;
import dev.relayfarm.ops.OpDef;
import dev.relayfarm.ops.OpPattern;
import java.util.List;

/**
 * Interpreter overhead benchmark (not a test; run by hand):
 * <pre>
 * ./mvnw -q -o -pl shared-ir test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp shared-ir/target/classes:shared-ir/target/test-classes:$(cat shared-ir/target/cp.txt) \
 *     dev.relayfarm.interp.InterpreterBench [nodes] [seconds]
 * </pre>
 * Evaluates a dataflow chain {@code add(add(...(%x, 1)...), 1)} and a let chain
 * {@code let %x1 = %x0 + 1; ...} of {@code nodes} scalar int32 adds, with a minimal add kernel, so
 * the time is the interpreter's own: environment, continuation stack, operator dispatch, value
 * wrapping. The same kernel called directly in a Java loop is the baseline.
 */
public final class InterpreterBench {
    private InterpreterBench() {}

    /** Scalar int32 add that allocates its result like every kernel does. */
    static final OpDef<NoAttrs> ADD = new OpDef<>("add", 2, a -> NoAttrs.parse("add", a), (t, n, a, r) -> true,
            OpPattern.BROADCAST,
            (in, attrs) -> List.of(NDArray.wrap(DType.INT32, new int[0], new int[] {in.get(0).intData()[0] + in.get(1).intData()[0]})));

    public static void main(String[] args) {
        int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 3;
        java.util.function.Function<String, OpDef<?>> ops = name -> ADD;

        NDArray one = NDArray.scalar(1);
        long t0 = System.nanoTime();
        for (int rep = 0; rep < 20; rep++) {
            NDArray acc = one;
            for (int i = 0; i < nodes; i++) acc = ADD.kernel().compute(List.of(acc, one), NoAttrs.INSTANCE).get(0);
            if (acc.intData()[0] != nodes + 1) throw new AssertionError();
        }
        double kernelNs = (System.nanoTime() - t0) / 20.0 / nodes;
        System.out.printf("direct kernel loop (baseline): %.1f ns per add%n", kernelNs);

        report("dataflow chain", DeepProgramTest.dataflowChain(nodes), ops, nodes, seconds, kernelNs);
        report("let chain", DeepProgramTest.letChain(nodes), ops, nodes, seconds, kernelNs);
    }

    private static void report(String what, IRModule m, java.util.function.Function<String, OpDef<?>> ops, int nodes, double seconds, double kernelNs) {
        NDArray x = NDArray.scalar(0);
        long c0 = System.nanoTime();
        Value cold = new Interpreter(m, ops).call("main", x);
        double coldMs = (System.nanoTime() - c0) / 1e6;
        if (cold.asTensor().getLong(0) != nodes) throw new AssertionError("wrong result " + cold);

        Interpreter warm = new Interpreter(m, ops);
        for (int i = 0; i < 5; i++) warm.call("main", x);
        // CPU time of this thread too: on a shared, overloaded machine wall time mostly measures waiting.
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        int runs = 0;
        long start = System.nanoTime();
        long cpuStart = threads.getCurrentThreadCpuTime();
        long deadline = start + (long) (seconds * 1e9);
        while (System.nanoTime() < deadline) {
            warm.call("main", x);
            runs++;
        }
        double perRunNs = (System.nanoTime() - start) / (double) runs;
        double perRunCpuNs = (threads.getCurrentThreadCpuTime() - cpuStart) / (double) runs;
        System.out.printf("%s of %d adds: first run %.1f ms (fresh interpreter, includes preparation); "
                        + "warm: %.2f evaluations/s wall, %.1f ns per node; %.2f evaluations per CPU-second, %.1f CPU-ns per node%n",
                what, nodes, coldMs, 1e9 / perRunNs, perRunNs / nodes, 1e9 / perRunCpuNs, perRunCpuNs / nodes);
    }
}
