package dev.relayfarm.gen;

import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.serde.BlobSink;
import dev.relayfarm.serde.BlobSource;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.text.RelayPrinter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Throughput of the text printer/parser and the JSON writer/reader in nodes per second, on the
 * 100,000-node dataflow chain, the 100,000-deep let chain and 1,000 random modules. Not a test: run
 * with {@code ./mvnw -o -pl shared-ir -Pbench test} (profile {@code bench} in shared-ir/pom.xml).
 * Each case is warmed up, then the best of several runs is reported, as wall time and as the
 * thread's CPU time (the machine is shared, so CPU time is the steadier number).
 */
public final class TextJsonBench {
    private static final int WARMUP = 3;
    private static final int RUNS = 5;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private record Workload(String name, List<IRModule> modules, long nodes) {}

    private record Timing(double wallMs, double cpuMs) {}

    public static void main(String[] args) {
        List<Workload> workloads = List.of(
                workload("dataflow chain 100k", List.of(RandomModules.dataflowChain(100_000))),
                workload("let chain 100k", List.of(RandomModules.letChain(100_000))),
                workload("1,000 random modules", RandomModules.modules(0, 1_000).stream().map(TextForm::of).toList()));
        System.out.printf("%-22s %-11s %9s %10s %10s %14s %14s%n", "workload", "step", "nodes", "wall ms", "cpu ms", "nodes/s wall", "nodes/s cpu");
        for (Workload w : workloads) {
            List<String> texts = map(w.modules, RelayPrinter::print);
            List<String> jsons = map(w.modules, IrJson::toJson);
            row(w, "text print", () -> map(w.modules, RelayPrinter::print));
            row(w, "text parse", () -> map(texts, t -> RelayParser.parseModule(t, "bench.relay")));
            row(w, "json write", () -> map(w.modules, m -> IrJson.write(m, BlobSink.NONE, IrJson.Options.INLINE_ALL)));
            row(w, "json read", () -> map(jsons, j -> IrJson.read(j, BlobSource.NONE)));
        }
    }

    private static Workload workload(String name, List<IRModule> modules) {
        long nodes = 0;
        for (IRModule m : modules) nodes += ExprTraversal.countNodes(m);
        return new Workload(name, modules, nodes);
    }

    private static void row(Workload w, String step, Runnable body) {
        for (int i = 0; i < WARMUP; i++) body.run();
        Timing best = new Timing(Double.MAX_VALUE, Double.MAX_VALUE);
        for (int i = 0; i < RUNS; i++) {
            long cpu0 = THREADS.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            body.run();
            double wall = (System.nanoTime() - t0) / 1e6;
            double cpu = (THREADS.getCurrentThreadCpuTime() - cpu0) / 1e6;
            best = new Timing(Math.min(best.wallMs, wall), Math.min(best.cpuMs, cpu));
        }
        System.out.printf("%-22s %-11s %9d %10.1f %10.1f %14.0f %14.0f%n", w.name, step, w.nodes, best.wallMs, best.cpuMs,
                w.nodes / (best.wallMs / 1e3), w.nodes / (best.cpuMs / 1e3));
    }

    private static <A, B> List<B> map(List<A> in, Function<A, B> f) {
        List<B> out = new ArrayList<>(in.size());
        for (A a : in) out.add(f.apply(a));
        return out;
    }
}
