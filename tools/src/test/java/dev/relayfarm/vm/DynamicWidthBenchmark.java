package dev.relayfarm.vm;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.bench.CompiledRunner;
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
 * What a dynamic width costs (issue 19: "within 1.15× of the same model compiled with that width pinned"): the PP-OCRv4
 * recognizer compiled once with {@code x=1x3x48x?} (VM, width kernels and their shape functions) against the same model
 * compiled for each width pinned (graph executor), one thread each, timed side by side in blocks
 * ({@link SideBySide#alternate}). Not a unit test: disabled unless asked for, and it needs an idle machine.
 * <pre>
 * ./mvnw -q -o -pl shared-ir,tools test -Dtest=DynamicWidthBenchmark -Dsurefire.failIfNoSpecifiedTests=false -Drelayfarm.bench=true [-Drelayfarm.bench.runs=30]
 * </pre>
 */
class DynamicWidthBenchmark {
    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void dynamicAgainstPinnedWidths(@TempDir Path dir) throws IOException {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        int runs = Integer.getInteger("relayfarm.bench.runs", 30);
        Path onnx = OcrRecognizerWidthTest.recognizer(dir);
        VmProgram program = VmCompiler.compile(Stages.inferTypes(Stages.importModel(ModelSource.read(onnx), "x=1x3x48x?")), CompileOptions.host(3));
        System.out.printf("%-6s %12s %12s %9s%n", "width", "vm dynamic", "graph pinned", "dyn/pin");
        try (VmRunner dynamic = new VmRunner(program.load(CCompiler.host().orElseThrow()), 1, "vm-dynamic-width")) {
            for (int w : new int[] {160, 320, 800}) {
                IRModule pinned = Stages.optimize(Stages.importModel(ModelSource.read(onnx), "x=1x3x48x" + w), 3, Target.host());
                Path folder = dir.resolve("pinned-" + w);
                Stages.codegen(pinned, new CompileOptions(Target.host(), 3, Map.of()), folder);
                try (CompiledRunner graph = CompiledRunner.load(folder, 1, "graph-pinned")) {
                    double[][] t = SideBySide.alternate(List.of(dynamic, graph), List.of(OcrRecognizerWidthTest.input(w, w)), 3, runs);
                    double d = SideBySide.percentile(t[0], 0.5), g = SideBySide.percentile(t[1], 0.5);
                    System.out.printf(Locale.ROOT, "%-6d %12.3f %12.3f %8.2fx%n", w, d, g, d / g);
                    System.out.flush();
                }
            }
        }
        System.out.printf("(medians of %d runs, ms, one thread each, idle machine required)%n", runs);
    }
}
