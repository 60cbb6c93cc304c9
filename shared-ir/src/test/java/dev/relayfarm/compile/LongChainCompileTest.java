package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.gen.RandomModules;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.runtime.CompiledModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * A long let chain of element-wise adds (each step its own kernel call after fuse-ops, since fusion does not
 * cross let bindings) compiles in time linear in its length. The graph executor used to be one straight-line
 * C function with a block per step, which gcc -O3 optimizes superlinearly: 10,000 steps took 17 s to compile
 * and 100,000 steps over 7 minutes. As a table it is a few dozen bytes per step and compiles in about a second.
 * The 100,000-step chain runs with -Plong.
 */
class LongChainCompileTest {
    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} lets")
    @ValueSource(ints = {1_000, 10_000, 100_000})
    void aLongLetChainCompilesInLinearTimeAndRuns(int lets) throws Exception {
        Assumptions.assumeTrue(lets <= 10_000 || Boolean.getBoolean("relayfarm.long"), "100,000 steps run with -Plong");
        Assumptions.assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        IRModule typed = Stages.inferTypes(RandomModules.letChain(lets));
        IRModule opt = Stages.optimize(typed, 3);
        // (a library cached by an earlier run makes this faster; the size bound below holds either way)
        long t0 = System.nanoTime();
        ArtifactCompiler.Artifact a = ArtifactCompiler.compile(opt, CompileOptions.host(3), dir.resolve("art"));
        double s = (System.nanoTime() - t0) / 1e9;
        int steps = a.graph().steps().size();
        long entry = Files.size(dir.resolve("art/src/entry.c"));
        System.out.printf("let chain of %d: %d steps, %d kernels, entry.c %d bytes, codegen %.1f s%n", lets, steps, a.kernels().size(), entry, s);
        assertTrue(steps >= lets / 2, "the chain stays a chain of kernel calls: " + steps + " steps");
        // linear size: a bounded number of bytes per step (was ~170 bytes of code per step)
        assertTrue(entry < 10_000 + 50L * steps, "entry.c is " + entry + " bytes for " + steps + " steps");
        // generous for a loaded 2-core machine; the old executor took 17 s at 10,000 steps and minutes beyond
        assertTrue(s < (lets <= 10_000 ? 15 : 60), "codegen took " + s + " s");
        NDArray x = NDArray.scalar(0.5f);
        float expected = ((TensorValue) Interpreter.runMain(typed, x)).data().floatData()[0];
        try (CompiledModel m = CompiledModel.load(dir.resolve("art"))) {
            assertEquals(expected, m.run(List.of(x)).getFirst().floatData()[0], Math.abs(expected) * 1e-5f);
        }
    }
}
