package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.passes.PassContext;
import dev.relayfarm.passes.PassOptions;
import dev.relayfarm.passes.WinogradConv2d;
import dev.relayfarm.runtime.CompiledModel;
import dev.relayfarm.text.RelayPrinter;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The light resnet50 compiled with its 3x3 stride-1 convolutions in Winograd F(4x4, 3x3) (the winograd-conv2d pass
 * at -O3) gives its expected output at ONNX's default tolerance, as the direct convolutions do in
 * {@link CompiledModelsTest}.
 */
class WinogradModelTest {
    @TempDir
    static Path tmp;

    @Test
    void resnet50WithWinogradMatchesItsExpectedOutput() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        Path light = OnnxTestData.light().orElse(null);
        assumeTrue(light != null, "ONNX light models not found: skipped");
        CompiledModelsTest.ModelCase c = CompiledModelsTest.lightModel(light.resolve("light_resnet50.onnx"));
        PassOptions options = PassOptions.level(3).withForced(Set.of(WinogradConv2d.NAME));
        IRModule optimized = OptPipeline.build().run(c.module(), new PassContext(options)).module();
        String text = RelayPrinter.print(optimized);
        // resnet50's 3x3 stride-1 convolutions: 3 at 56x56, 3 at 28, 5 at 14 (each later stage's first 3x3 has stride 2; the two at 7x7 stay direct)
        long winograd = text.lines().filter(l -> l.contains("nn.contrib_conv2d_winograd_NCHWc(")).count();
        assertEquals(11, winograd, "Winograd convolutions in the optimized module");
        assertTrue(!text.contains("weight_transform"), "every weight transform folded at compile time");
        ArtifactCompiler.Artifact art = ArtifactCompiler.compile(optimized, CompileOptions.host(3), tmp.resolve(c.name()));
        List<NDArray> got;
        try (CompiledModel m = CompiledModel.load(art.dir())) {
            got = m.run(c.inputs());
        }
        assertEquals(c.expected().size(), got.size());
        for (int i = 0; i < got.size(); i++) {
            int out = i;
            c.tolerance(i).compare(got.get(i), c.expected().get(i)).ifPresent(mm -> org.junit.jupiter.api.Assertions.fail(c.name() + " output " + out + ": " + mm.message()));
        }
    }
}
