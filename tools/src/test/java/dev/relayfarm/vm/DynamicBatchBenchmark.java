package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.bench.CompiledRunner;
import dev.relayfarm.bench.OrtRunner;
import dev.relayfarm.bench.SideBySide;
import dev.relayfarm.bench.VmRunner;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a dynamic batch costs (issue 19: "one artifact serves every input size at near-static speed"): PaddleOCR's
 * text-direction classifier compiled once with {@code x=?x3x48x192} (VM, row kernels and their shape functions) against
 * the same model compiled for each batch pinned (graph executor) and ONNX Runtime, one thread each, timed side by side
 * in blocks ({@link SideBySide#alternate}). Not a unit test: disabled unless asked for, and it needs an idle machine.
 * <pre>
 * ./mvnw -q -o -pl tools test -Dtest=DynamicBatchBenchmark -Dsurefire.failIfNoSpecifiedTests=false -Drelayfarm.bench=true [-Drelayfarm.bench.runs=50]
 * </pre>
 */
class DynamicBatchBenchmark {
    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void dynamicAgainstPinnedBatches(@TempDir Path dir) throws IOException {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        int runs = Integer.getInteger("relayfarm.bench.runs", 50);
        Path onnx = DynamicBatchModelTest.classifier(dir);
        VmProgram program = VmCompiler.compile(Stages.inferTypes(Stages.importModel(ModelSource.read(onnx), "x=?x3x48x192")), CompileOptions.host(3));
        System.out.printf("%-6s %12s %12s %9s %12s%n", "batch", "vm dynamic", "graph pinned", "dyn/pin", "ORT");
        try (VmRunner dynamic = new VmRunner(program.load(CCompiler.host().orElseThrow()), 1, "vm-dynamic"); OrtRunner ort = OrtRunner.open(onnx, 1)) {
            for (int n : new int[] {1, 4, 8, 16}) {
                IRModule pinned = Stages.optimize(Stages.importModel(ModelSource.read(onnx), "x=" + n + "x3x48x192"), 3, Target.host());
                Path folder = dir.resolve("pinned-" + n);
                Stages.codegen(pinned, new CompileOptions(Target.host(), 3, Map.of()), folder);
                try (CompiledRunner graph = CompiledRunner.load(folder, 1, "graph-pinned")) {
                    double[][] t = SideBySide.alternate(List.of(dynamic, graph, ort), List.of(DynamicBatchModelTest.batch(n, n)), 5, runs);
                    double d = SideBySide.percentile(t[0], 0.5), g = SideBySide.percentile(t[1], 0.5), o = SideBySide.percentile(t[2], 0.5);
                    System.out.printf(Locale.ROOT, "%-6d %12.3f %12.3f %8.2fx %12.3f%n", n, d, g, d / g, o);
                    System.out.flush();
                }
            }
        }
        System.out.printf("(medians of %d runs, ms, one thread each, idle machine required)%n", runs);
    }
}
