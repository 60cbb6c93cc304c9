package dev.relayfarm.types;

import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import java.util.Locale;

/**
 * Type inference throughput benchmark (not a test; run by hand):
 * <pre>
 * ./mvnw -q -o -pl shared-ir test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp shared-ir/target/classes:shared-ir/target/test-classes:$(cat shared-ir/target/cp.txt) \
 *     dev.relayfarm.types.TypeInferenceBench [depth] [seconds]
 * </pre>
 * Infers the two programs of {@link LargeProgramTest} (a let chain of {@code depth} operator calls
 * with an unannotated parameter, so the result module is rebuilt too; and a nested call chain
 * alternating operator calls and calls of a function-typed parameter) repeatedly for about
 * {@code seconds} each after a warm-up, and prints expression nodes inferred per second.
 */
public final class TypeInferenceBench {
    private TypeInferenceBench() {}

    public static void main(String[] args) {
        int depth = args.length > 0 ? Integer.parseInt(args[0]) : LargeProgramTest.N;
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 5;
        run("let chain", LargeProgramTest.letChain(depth), seconds);
        run("call chain", LargeProgramTest.callChain(depth), seconds);
    }

    private static void run(String name, IRModule m, double seconds) {
        int nodes = ExprTraversal.countNodes(m);
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 3; i++) TypeInference.infer(m, TestOps.RESOLVER); // warm-up
        long t0 = System.nanoTime();
        long c0 = cpu.getCurrentThreadCpuTime();
        long deadline = t0 + (long) (seconds * 1e9);
        int reps = 0;
        long best = Long.MAX_VALUE;
        while (System.nanoTime() < deadline || reps < 3) {
            long s = System.nanoTime();
            TypeInference.infer(m, TestOps.RESOLVER);
            best = Math.min(best, System.nanoTime() - s);
            reps++;
        }
        double mean = (System.nanoTime() - t0) / 1e9 / reps;
        // CPU time of this thread: on a shared, loaded machine wall time overstates the cost (GC threads excluded).
        double cpuMean = (cpu.getCurrentThreadCpuTime() - c0) / 1e9 / reps;
        System.out.printf(Locale.ROOT, "%-10s %,d nodes: wall mean %.1f ms (best %.1f ms) = %,.0f nodes/s; "
                        + "thread CPU mean %.1f ms = %,.0f nodes/CPU-s; %d reps%n",
                name, nodes, mean * 1e3, best / 1e6, nodes / mean, cpuMean * 1e3, nodes / cpuMean, reps);
    }
}
