package dev.relayfarm.passes;

import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxModels;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.types.TypeInference;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Compile time of the -O3 pipeline on the light models (DenseNet-121's budget is 5 s). For each
 * model: import once, type-check once (the reference cost the ratio column is against), then run
 * the whole -O3 pipeline (initial typing included) 2 times to warm up and 5 times measured; prints
 * the median wall time, the CPU time of the process per run, the ratio to one type check, and the
 * per-pass table of the last run for DenseNet-121. Not part of the test run:
 * <pre>
 * ./mvnw -q -o -pl shared-ir test -Dtest=OptBenchmark -Drelayfarm.bench=true [-Drelayfarm.bench.models=densenet121]
 * </pre>
 */
public final class OptBenchmark {
    @org.junit.jupiter.api.Test
    @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void benchmark() throws Exception {
        main(new String[] {System.getProperty("relayfarm.bench.models", "")});
    }

    public static void main(String[] args) throws Exception {
        Path light = OnnxTestData.light().orElseThrow(() -> new IllegalStateException("../shared/onnx/light not found"));
        Set<String> only = args.length > 0 && !args[0].isBlank() ? Set.of(args[0].split(",")) : Set.of();
        System.out.printf("cores=%d java=%s passes at -O3: %s%n", Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), OptPipeline.ORDER);
        System.out.printf("%-14s %8s %12s %12s %12s %10s%n", "model", "nodes", "type ms", "-O3 ms (med)", "-O3 cpu ms", "-O3/type");
        List<Path> files;
        try (Stream<Path> s = Files.list(light)) {
            files = s.filter(p -> p.getFileName().toString().matches("light_.*\\.onnx")).sorted().toList();
        }
        for (Path f : files) {
            String name = f.getFileName().toString().replaceFirst("^light_", "").replaceFirst("\\.onnx$", "");
            if (!only.isEmpty() && !only.contains(name)) continue;
            IRModule m = importLight(f);
            long ty0 = System.nanoTime();
            TypeInference.infer(m);
            double typeMs = (System.nanoTime() - ty0) / 1e6;
            double[] wall = new double[5];
            double cpu = 0;
            PassContext last = null;
            for (int i = -2; i < wall.length; i++) {
                PassContext ctx = new PassContext(PassOptions.level(3));
                long c0 = cpuNanos();
                long t0 = System.nanoTime();
                OptPipeline.build().run(m, ctx);
                if (i >= 0) {
                    wall[i] = (System.nanoTime() - t0) / 1e6;
                    cpu += (cpuNanos() - c0) / 1e6;
                }
                last = ctx;
            }
            Arrays.sort(wall);
            System.out.printf("%-14s %8d %12.1f %12.1f %12.1f %9.1fx%n", name, dev.relayfarm.ir.ExprTraversal.countNodes(m), typeMs,
                    wall[wall.length / 2], cpu / wall.length, wall[wall.length / 2] / typeMs);
            if (name.equals("densenet121")) {
                System.out.printf("  %-28s %10s %10s %10s %10s%n", "pass (densenet121, last run)", "pass ms", "retype ms", "nodes in", "nodes out");
                for (PassRecord r : last.records()) {
                    System.out.printf("  %-28s %10.1f %10.1f %10d %10d%n", r.name(), r.passNanos() / 1e6, r.inferNanos() / 1e6, r.nodesBefore(), r.nodesAfter());
                }
            }
        }
    }

    private static IRModule importLight(Path file) throws Exception {
        ModelProto proto = OnnxModels.read(file);
        Set<String> inits = new HashSet<>();
        proto.getGraph().getInitializerList().forEach(t -> inits.add(t.getName()));
        String input = proto.getGraph().getInputList().stream().map(ValueInfoProto::getName).filter(n -> !inits.contains(n)).findFirst().orElseThrow();
        Map<String, List<Long>> shapes = new LinkedHashMap<>();
        shapes.put(input, List.of(1L, 3L, 224L, 224L));
        return TypeInference.infer(OnnxImporter.importModel(file, ImportOptions.DEFAULT.withInputShapes(shapes))).module();
    }

    /** CPU time of the whole process (all threads), in nanoseconds. */
    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }
}
