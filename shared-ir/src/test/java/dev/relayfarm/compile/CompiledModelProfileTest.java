package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.runtime.CompiledModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code relayfarm_profile}: the executor's run with each step timed. It computes what {@code relayfarm_run} computes, lists
 * every kernel of the manifest, and its parts fit inside the call; an artifact built before it existed is refused by name.
 */
class CompiledModelProfileTest {
    @TempDir
    static Path tmp;

    @BeforeAll
    static void needsCompiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
    }

    @Test
    void profileTimesEveryKernelAndComputesWhatRunComputes() throws Exception {
        Path dir = tmp.resolve("small");
        ArtifactCompiler.Artifact art = ArtifactCompiler.compile(GraphPlanTest.optimized(ArtifactTest.SMALL), CompileOptions.host(3), dir);
        Manifest manifest = Manifest.read(dir);
        assertEquals("relayfarm_profile", manifest.entry().profile());
        assertEquals("relayfarm_profile", new ObjectMapper().readTree(dir.resolve("manifest.json").toFile()).get("entry").get("profile").asText());
        List<String> kernels = manifest.kernels().stream().map(Manifest.Kernel::name).toList();
        assertTrue(kernels.size() >= 2, "dense and the elementwise tail: " + kernels);
        List<NDArray> in = List.of(ArtifactTest.random(1, 2, 8), ArtifactTest.random(2, 4, 8));
        try (CompiledModel cm = CompiledModel.load(art.dir())) {
            cm.setNumThreads(1);
            assertTrue(cm.canProfile());
            List<NDArray> want = cm.run(in);
            for (int r = 0; r < 3; r++) {
                CompiledModel.KernelProfile p = cm.profile(in);
                assertEquals(kernels, List.copyOf(p.kernelSeconds().keySet()), "every kernel, in the manifest's order");
                p.kernelSeconds().forEach((k, s) -> assertTrue(s > 0, k + " took " + s + " s"));
                assertTrue(p.copySeconds() >= 0);
                assertTrue(p.kernelSecondsTotal() + p.copySeconds() <= p.totalSeconds(),
                        "kernels " + p.kernelSecondsTotal() + " s + copies " + p.copySeconds() + " s within the call's " + p.totalSeconds() + " s");
                assertEquals(want.size(), p.outputs().size());
                for (int i = 0; i < want.size(); i++) assertTrue(want.get(i).contentEquals(p.outputs().get(i)), "output " + i + " as relayfarm_run's");
            }
        }
    }

    /** An artifact compiled before relayfarm_profile existed still runs; profiling it says what to do. */
    @Test
    void anArtifactWithoutTheSymbolRunsButRefusesToProfile() throws Exception {
        Path dir = tmp.resolve("old");
        ArtifactCompiler.compile(GraphPlanTest.optimized(ArtifactTest.SMALL), CompileOptions.host(3), dir);
        String entry = Files.readString(dir.resolve("src/entry.c")).replace("relayfarm_profile(", "rf_not_exported_profile(")
                .replace("int relayfarm_num_kernels", "static int rf_unused_num_kernels").replace("const char* relayfarm_kernel_name", "static const char* rf_unused_kernel_name");
        assertFalse(entry.contains("relayfarm_profile("));
        Path so = CCompiler.host().orElseThrow().compile(Files.readString(dir.resolve("src/kernels.c")) + "\n" + entry);
        Files.copy(so, dir.resolve("lib.so"), StandardCopyOption.REPLACE_EXISTING);
        List<NDArray> in = List.of(ArtifactTest.random(1, 2, 8), ArtifactTest.random(2, 4, 8));
        try (CompiledModel cm = CompiledModel.load(dir)) {
            assertFalse(cm.canProfile());
            assertEquals(2, cm.run(in).size());
            String msg = assertThrows(ArtifactException.class, () -> cm.profile(in)).getMessage();
            assertTrue(msg.contains("has no relayfarm_profile") && msg.contains("compile it again"), msg);
        }
    }
}
