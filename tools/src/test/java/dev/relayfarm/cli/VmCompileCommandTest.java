package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.artifact.ArtifactException;
import dev.relayfarm.interp.Npy;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.runtime.CompiledModel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** relayc compile picks the VM when the graph executor refuses a program; relayc run runs the VM artifact like the interpreter runs the text. */
class VmCompileCommandTest {
    @TempDir
    Path tmp;

    @BeforeAll
    static void needsCompiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
    }

    @Test
    void recursionCompilesForTheVmAndRunsLikeTheInterpreter() throws Exception {
        Path art = tmp.resolve("fact");
        CliRun c = CliRun.relayc("compile", "../examples/factorial.relay", "-o", art.toString());
        assertEquals(0, c.exitCode(), c.err());
        assertTrue(c.out().contains("executor vm") && c.out().contains("the graph executor refused it"), c.out());
        JsonNode manifest = new ObjectMapper().readTree(art.resolve("manifest.json").toFile());
        assertEquals("vm", manifest.get("executor").asText());
        assertEquals("relayfarm-artifact/1", manifest.get("format").asText());
        assertEquals("vm.rfx", manifest.get("executable").asText());
        assertEquals("lib.so", manifest.get("lib").asText());
        assertEquals("n", manifest.get("inputs").get(0).get("name").asText());
        assertTrue(manifest.get("kernels").size() >= 2, manifest.toString());
        for (String f : new String[] {"vm.rfx", "lib.so", "src/kernels.c"}) assertTrue(Files.isRegularFile(art.resolve(f)), f);
        assertEquals(64, manifest.get("files").get("vm.rfx").asText().length());

        var e = assertThrows(ArtifactException.class, () -> CompiledModel.load(art));
        assertTrue(e.getMessage().contains("an artifact for the vm executor, not the graph executor"), e.getMessage());

        Path n = tmp.resolve("n.npy");
        Npy.write(n, NDArray.scalar(10));
        CliRun vm = CliRun.relayc("run", art.toString(), "--arg", "n=" + n, "--out", tmp.resolve("vm").toString(), "--repeat", "2");
        assertEquals(0, vm.exitCode(), vm.err());
        assertTrue(vm.out().contains("on the VM: first call") && vm.out().contains("over 2 calls"), vm.out());
        CliRun ref = CliRun.relayc("run", "../examples/factorial.relay", "--arg", "n=" + n, "--out", tmp.resolve("ref").toString());
        assertEquals(0, ref.exitCode(), ref.err());
        assertEquals(3628800, Npy.read(tmp.resolve("vm/output_0.npy")).getLong(0));
        assertTrue(Npy.read(tmp.resolve("ref/output_0.npy")).contentEquals(Npy.read(tmp.resolve("vm/output_0.npy"))));

        Path wrong = tmp.resolve("wrong.npy");
        Npy.write(wrong, NDArray.scalar(10L));
        CliRun mismatched = CliRun.relayc("run", art.toString(), "--arg", "n=" + wrong);
        assertEquals(1, mismatched.exitCode());
        assertTrue(mismatched.err().contains("input 0 (n) must be int32, got int64"), mismatched.err());
        CliRun missing = CliRun.relayc("run", art.toString());
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("needs --arg n=FILE.npy (int32 [])"), missing.err());
    }

    @Test
    void compilingTwiceGivesTheSameArtifact() throws Exception {
        Path a = tmp.resolve("a"), b = tmp.resolve("b");
        assertEquals(0, CliRun.relayc("compile", "../examples/tree_lstm.relay", "-o", a.toString()).exitCode());
        assertEquals(0, CliRun.relayc("compile", "../examples/tree_lstm.relay", "-o", b.toString()).exitCode());
        for (String f : new String[] {"manifest.json", "vm.rfx", "src/kernels.c"}) {
            assertArrayEquals(Files.readAllBytes(a.resolve(f)), Files.readAllBytes(b.resolve(f)), f);
        }
        CliRun run = CliRun.relayc("run", a.toString(), "--random");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().contains("output_0: Tensor[(1, 4), float32] = ["), run.out());
    }

    @Test
    void aStaticModelStillGetsTheGraphExecutor() throws Exception {
        Path art = tmp.resolve("mlp");
        CliRun c = CliRun.relayc("compile", "../examples/mlp.relay", "-o", art.toString());
        assertEquals(0, c.exitCode(), c.err());
        assertFalse(c.out().contains("executor vm"), c.out());
        assertFalse(new ObjectMapper().readTree(art.resolve("manifest.json").toFile()).has("executor"));
    }

    @Test
    void aProgramNeitherExecutorRunsNamesBothRefusals() throws Exception {
        // a dynamic width resized to a fixed one: the graph executor needs static inputs, and the VM's width kernel cannot merge
        // its samples (the scale is a float that is no count)
        Path f = tmp.resolve("wide.relay");
        Files.writeString(f, "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 3, 8, ?), float32]) { image.resize2d(%x, size=[8, 8]) }\n");
        CliRun c = CliRun.relayc("compile", f.toString(), "-o", tmp.resolve("wide").toString());
        assertEquals(2, c.exitCode(), c.out());
        assertTrue(c.err().contains("has a dynamic shape") && c.err().contains("; the VM cannot run it either: kernel fused_image_resize2d_0"), c.err());
        assertFalse(Files.exists(tmp.resolve("wide/manifest.json")), "nothing half-written");
    }
}
