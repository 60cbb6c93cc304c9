package dev.relayfarm.kernel.lower;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.Function;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.codegen.CModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.runtime.KernelLibrary;
import dev.relayfarm.runtime.NativeKernel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Where a compiled model spends its time: every -O3 group of a light model lowered with its default
 * config, compiled into one module and timed alone (median of 7 runs on random inputs),
 * printed slowest first with its workload and share of the total (-Drelayfarm.bench.threads=N, default 2;
 * -Drelayfarm.bench.top=N rows, default 15). Opt-in:
 * {@code ./mvnw -q -pl shared-ir test -Dtest=GroupProfileBenchmark -Drelayfarm.bench=true [-Drelayfarm.bench.models=squeezenet]}.
 */
class GroupProfileBenchmark {
    @Test
    void profile() {
        assumeTrue(Boolean.getBoolean("relayfarm.bench"), "benchmark: run with -Drelayfarm.bench=true");
        Path light = OnnxTestData.light().orElse(null);
        assumeTrue(light != null && CCompiler.host().isPresent(), "needs ../shared/onnx/light and a C compiler");
        for (String model : System.getProperty("relayfarm.bench.models", "squeezenet").split(",")) {
            Path file = light.resolve("light_" + model + ".onnx");
            if (Files.isRegularFile(file)) profile(model, file);
        }
    }

    private record Row(String name, String workload, String config, double ms) {}

    private static void profile(String model, Path file) {
        IRModule m = OptPipeline.optimize(OnnxImporter.importModel(file, ImportOptions.DEFAULT), 3);
        List<LoweredKernel> kernels = new ArrayList<>();
        int i = 0;
        for (Expr e : ExprTraversal.postOrder(m.main().orElseThrow().body())) {
            if (e instanceof Function f && f.isPrimitive()) kernels.add(PrimitiveLowering.lower(f, "g" + i++, Target.host(), Optional.empty()));
        }
        CModule module = new CModule(kernels.stream().map(LoweredKernel::func).toList());
        List<Row> rows = new ArrayList<>();
        Random random = new Random(1);
        try (KernelLibrary lib = KernelLibrary.build(module, CCompiler.host().orElseThrow())) {
            lib.setNumThreads(Integer.getInteger("relayfarm.bench.threads", 2));
            for (LoweredKernel k : kernels) {
                NativeKernel nk = lib.kernel(k.signature().name());
                List<NDArray> in = new ArrayList<>();
                for (TensorSpec p : k.signature().inputs()) {
                    NDArray a = NDArray.zeros(p.dtype(), p.shape().stream().mapToInt(Integer::intValue).toArray());
                    for (int j = 0; j < a.elementCount(); j++) a.setDouble(j, p.dtype().isFloat() ? random.nextDouble() : 0);
                    in.add(a);
                }
                nk.run(in);
                double[] t = new double[7];
                for (int r = 0; r < t.length; r++) {
                    long s = System.nanoTime();
                    nk.run(in);
                    t[r] = (System.nanoTime() - s) / 1e6;
                }
                Arrays.sort(t);
                rows.add(new Row(k.signature().name(), k.workload(), k.config().toString(), t[t.length / 2]));
            }
        }
        double total = rows.stream().mapToDouble(Row::ms).sum();
        rows.sort(Comparator.comparingDouble(Row::ms).reversed());
        System.out.printf("group profile %s: %d kernels, %.2f ms in total (%d threads)%n", model, rows.size(), total, Integer.getInteger("relayfarm.bench.threads", 2));
        for (Row r : rows.subList(0, Math.min(Integer.getInteger("relayfarm.bench.top", 15), rows.size()))) {
            System.out.printf("  %8.3f ms %5.1f%%  %-6s %s  %s%n", r.ms(), 100 * r.ms() / total, r.name(), r.workload(), r.config());
        }
    }
}
