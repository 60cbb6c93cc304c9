package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.compile.ArtifactLimitException;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Codegen refuses, before lowering or compiling anything, a model over one of its limits, naming the limit and its setting. */
class CompileLimitsTest {
    @TempDir
    Path dir;

    static IRModule mlp() throws Exception {
        return Stages.optimize(Stages.inferTypes(Stages.importModel(ModelSource.read(Path.of("../examples/mlp.relay")), "")), 3);
    }

    private String refused(CompileLimits limits) throws Exception {
        IRModule m = mlp();
        ArtifactLimitException e = assertThrows(ArtifactLimitException.class, () -> ArtifactCompiler.compile(m, CompileOptions.host(3).withLimits(limits), dir));
        assertTrue(e instanceof CompileError, "a user error: the job fails at once, no retries");
        assertFalse(Files.exists(dir.resolve("src/kernels.c")), "nothing generated");
        return e.getMessage();
    }

    @Test
    void eachLimitNamesItsSetting() throws Exception {
        ArtifactCompiler.Artifact a = ArtifactCompiler.compile(mlp(), CompileOptions.host(3), dir.resolve("ok"));
        int kernels = a.kernels().size();
        long arena = a.memory().arenaBytes();
        assertEquals("the model needs " + kernels + " kernels, the limit is 1 (relayfarm.limits.max-kernels)", refused(CompileLimits.DEFAULT.withMaxKernels(1)));
        assertTrue(refused(CompileLimits.DEFAULT.withMaxSteps(1)).matches("the model needs \\d+ executor steps \\(kernel calls and copies\\), the limit is 1 \\(relayfarm.limits.max-steps\\)"));
        String arenaMsg = refused(CompileLimits.DEFAULT.withMaxArenaBytes(arena - 1));
        assertTrue(arenaMsg.startsWith("the model's intermediates need a " + arena + " bytes arena, the limit is " + (arena - 1)
                + " bytes (relayfarm.limits.max-arena-bytes); the largest is "), arenaMsg);
        assertTrue(refused(CompileLimits.DEFAULT.withMaxSourceBytes(1000)).matches(
                "the model's generated C is \\d+ bytes \\(" + kernels + " kernels, \\d+ steps\\), the limit is 1000 bytes \\(relayfarm.limits.max-source-bytes\\)"));
        // at the limits exactly it compiles
        ArtifactCompiler.compile(mlp(), CompileOptions.host(3).withLimits(CompileLimits.DEFAULT.withMaxKernels(kernels).withMaxArenaBytes(arena)), dir.resolve("edge"));
    }

    @Test
    void aCompileOutOfTimeIsTheModelsLimitNotARetry() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(dev.relayfarm.kernel.codegen.CCompiler.host().isPresent(), "no C compiler: nothing to time out");
        // a shape no earlier run used, so the kernel is not in the library cache and the compiler really runs (and is killed);
        // drawn at random from two million (System.nanoTime() % 100_000 repeated: its low digits are coarse on some clocks)
        int n = 1000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(2_000_000);
        String text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, " + n + "), float32], %w: Tensor[(7, " + n + "), float32]) { nn.dense(%x, %w) }\n";
        IRModule m = Stages.optimize(Stages.inferTypes(Stages.importModel(ModelSource.of("dense.relay", dev.relayfarm.pipeline.ModelFormat.RELAY,
                text.getBytes(java.nio.charset.StandardCharsets.UTF_8)), "")), 3);
        CompileOptions options = CompileOptions.host(3).withLimits(CompileLimits.DEFAULT.withCompileTimeout(java.time.Duration.ofMillis(1)));
        ArtifactLimitException e = assertThrows(ArtifactLimitException.class, () -> ArtifactCompiler.compile(m, options, dir.resolve("slow")));
        assertTrue(e instanceof CompileError, "a user error: the job fails at once, no retries");
        assertTrue(e.getMessage().contains("longer than the compile timeout of 1 ms (relayfarm.limits.compile-timeout); the compiler was killed"), e.getMessage());
    }
}
