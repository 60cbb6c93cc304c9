package dev.relayfarm.pipeline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.artifact.ArtifactArchive;
import dev.relayfarm.artifact.Manifest;
import dev.relayfarm.artifact.ScheduleSource;
import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.frontend.OnnxFormatException;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.serde.InMemoryBlobStore;
import dev.relayfarm.serde.IrJson;
import dev.relayfarm.text.RelayParseException;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.types.TypeException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The stage functions one by one, and chained with JSON in between exactly as the farm runs them. */
class StagesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Path EXAMPLES = Path.of("../examples");

    private static ModelSource relay(String name, String text) {
        return ModelSource.of(name, ModelFormat.RELAY, text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void inputShapesParseTheJobsJoinedForm() {
        assertEquals(Map.of("x", List.of(1L, 3L, 224L, 224L), "y", List.of(1L, 10L)), InputShapes.parse("x=1x3x224x224, y=1x10"));
        assertEquals(Map.of("x", List.of(1L, 3L)), InputShapes.parse("x=1,3"), "dims may be comma-separated, as --shape allows");
        assertEquals(Map.of("a", List.of(2L), "b", List.of(4L, 5L)), InputShapes.parse("a=2,b=4,5"));
        assertEquals(Map.of(), InputShapes.parse(""));
        assertEquals("x=1x3,y=7", InputShapes.format(InputShapes.parse("x=1x3,y=7")));
        var e = assertThrows(ModelInputException.class, () -> InputShapes.parse("x=1xq"));
        assertTrue(e.getMessage().contains("'x=1xq'"), e.getMessage());
        assertThrows(ModelInputException.class, () -> InputShapes.parse("1x3"));
        assertTrue(e instanceof CompileError);
    }

    @Test
    void aQuestionMarkKeepsADimDynamic() {
        long any = dev.relayfarm.frontend.ImportOptions.ANY_DIM;
        assertEquals(Map.of("x", List.of(1L, 3L, 48L, any)), InputShapes.parse("x=1x3x48x?"));
        assertEquals(Map.of("x", List.of(1L, any)), InputShapes.of(List.of("x=1, ?")));
        assertEquals("x=1x3x48x?", InputShapes.format(InputShapes.parse("x=1x3x48x?")));
        // ONNX's own -1 is not accepted for '?': as a binding it reads like a size
        var minus = assertThrows(ModelInputException.class, () -> InputShapes.of(List.of("x=1x-1")));
        assertEquals("--shape: x=1x-1: dim 1 is -1, dims must be positive (? keeps a dim dynamic)", minus.getMessage());
        var e = assertThrows(ModelInputException.class, () -> InputShapes.of(List.of("x=1x??")));
        assertEquals("--shape expects NAME=D0xD1x..., got 'x=1x??'", e.getMessage());
    }

    @Test
    void importRelayAndOnnxFromBytes() throws Exception {
        IRModule m = Stages.importModel(ModelSource.read(EXAMPLES.resolve("mlp.relay")), "");
        assertTrue(m.main().isPresent());
        var bad = assertThrows(RelayParseException.class, () -> Stages.importModel(relay("bad.relay", "def @main(%x) { %y }"), ""));
        assertTrue(bad.getMessage().startsWith("bad.relay:1:"), bad.getMessage());
        assertTrue(bad instanceof CompileError);
        var shapes = assertThrows(ModelInputException.class, () -> Stages.importModel(ModelSource.read(EXAMPLES.resolve("mlp.relay")), "x=1x784"));
        assertTrue(shapes.getMessage().contains("ONNX models only"), shapes.getMessage());
        var notUtf8 = assertThrows(ModelInputException.class, () -> Stages.importModel(ModelSource.of("b.relay", ModelFormat.RELAY, new byte[] {(byte) 0xff, 0x41}), ""));
        assertTrue(notUtf8.getMessage().contains("UTF-8"), notUtf8.getMessage());
        var notOnnx = assertThrows(OnnxFormatException.class,
                () -> Stages.importModel(ModelSource.of("junk.onnx", ModelFormat.ONNX, "not a protobuf".getBytes(StandardCharsets.UTF_8)), ""));
        assertTrue(notOnnx.getMessage().startsWith("junk.onnx: "), notOnnx.getMessage());
        assertTrue(notOnnx instanceof CompileError);
        assertFalse(new IllegalStateException("a bug") instanceof CompileError);
    }

    @Test
    void inferTypesFillsSignaturesAndReportsTypeErrors() {
        IRModule m = Stages.importModel(relay("t.relay", "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }"), "");
        IRModule typed = Stages.inferTypes(m);
        assertTrue(typed.main().orElseThrow().retType() != null, "return type filled in");
        IRModule bad = Stages.importModel(relay("e.relay", "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4), float32]) { add(%x, %y) }"), "");
        var e = assertThrows(TypeException.class, () -> Stages.inferTypes(bad));
        assertTrue(e instanceof CompileError);
    }

    @Test
    void workloadsAreTheKeysCodegenLooksSchedulesUpBy(@TempDir Path tmp) throws Exception {
        IRModule opt = Stages.optimize(Stages.inferTypes(Stages.importModel(ModelSource.read(EXAMPLES.resolve("mlp.relay")), "")), 3);
        List<TuningTask> ws = Stages.tasks(opt, Target.host());
        assertFalse(ws.isEmpty());
        assertEquals(ws.size(), ws.stream().map(TuningTask::key).distinct().count(), "distinct keys");
        ArtifactCompiler.Artifact a = Stages.codegen(opt, new CompileOptions(Target.host(), 3, Map.of()), tmp.resolve("art"));
        // every kernel's workload is listed, with the default config codegen used for it
        JsonNode manifest = JSON.readTree(tmp.resolve("art/manifest.json").toFile());
        for (JsonNode k : manifest.get("kernels")) {
            TuningTask w = ws.stream().filter(x -> x.key().equals(k.get("workload").asText())).findFirst().orElseThrow(() -> new AssertionError("missing " + k));
            assertEquals(ScheduleConfig.fromJson(k.get("config").toString()), w.defaultConfig());
            assertEquals("default", k.get("source").asText(), "nothing stored: the template's default");
            assertEquals(w.template(), w.defaultConfig().template());
            assertTrue(w.kernels().contains(k.get("name").asText()), w + " vs " + k);
        }
        assertEquals(a.kernels().stream().map(k -> k.workload()).distinct().count(), ws.size());
    }

    @Test
    void aStoredScheduleForAWorkloadChangesTheArtifact(@TempDir Path tmp) throws Exception {
        IRModule opt = Stages.optimize(Stages.importModel(ModelSource.read(EXAMPLES.resolve("mlp.relay")), ""), 3);
        List<TuningTask> ws = Stages.tasks(opt, Target.host());
        TuningTask dense = ws.stream().filter(w -> w.template().startsWith("dense")).findFirst().orElseThrow(() -> new AssertionError("no dense workload in " + ws));
        // another valid point of the dense template's space: the same knobs with one changed to a smaller divisor
        ScheduleConfig other = null;
        for (var e : dense.defaultConfig().knobs().entrySet()) {
            if (e.getValue() instanceof Integer v && v > 1) {
                other = dense.defaultConfig().with(e.getKey(), 1);
                break;
            }
        }
        if (other == null) throw new AssertionError("default dense config has no integer knob above 1: " + dense.defaultConfig());
        var base = Stages.codegen(opt, new CompileOptions(Target.host(), 3, Map.of()), tmp.resolve("a"));
        var tuned = Stages.codegen(opt, new CompileOptions(Target.host(), 3, Map.of(dense.key(), other)), tmp.resolve("b"));
        assertNotEquals(base.contentHash(), tuned.contentHash());
        boolean applied = false;
        for (JsonNode k : JSON.readTree(tmp.resolve("b/manifest.json").toFile()).get("kernels")) {
            if (k.get("workload").asText().equals(dense.key())) {
                assertEquals(other, ScheduleConfig.fromJson(k.get("config").toString()));
                assertEquals("tuned", k.get("source").asText());
                applied = true;
            } else {
                assertEquals("default", k.get("source").asText());
            }
        }
        assertTrue(applied, "the manifest records the stored config for " + dense.key());
        // a config transferred from a similar workload says so; the manifest reads back with its sources
        Stages.codegen(opt, new CompileOptions(Target.host(), 3, Map.of(dense.key(), other)).withSources(Map.of(dense.key(), ScheduleSource.TRANSFERRED)),
                tmp.resolve("c"));
        Manifest transferred = Manifest.read(tmp.resolve("c"));
        assertEquals(ScheduleSource.TRANSFERRED, transferred.kernels().stream().filter(k -> k.workload().equals(dense.key())).findFirst().orElseThrow().source());
        assertThrows(IllegalArgumentException.class, () -> new CompileOptions(Target.host(), 3, Map.of()).withSources(Map.of(dense.key(), ScheduleSource.TUNED)),
                "a source for a workload without a listed config");
    }

    @Test
    void theChainThroughJsonEqualsTheInProcessChain(@TempDir Path tmp) throws Exception {
        // mnist8_cntk when ../shared/onnx is there (weights become blobs), else the Relay example
        var mnist = OnnxTestData.models().map(d -> d.resolve("mnist8_cntk/model.onnx")).filter(Files::isRegularFile);
        ModelSource src = mnist.isPresent() ? ModelSource.read(mnist.get()) : ModelSource.read(EXAMPLES.resolve("mlp.relay"));
        InMemoryBlobStore blobs = new InMemoryBlobStore();
        IRModule direct = Stages.optimize(Stages.inferTypes(Stages.importModel(src, "")), 3);
        IRModule imported = hop(Stages.importModel(src, ""), blobs);
        IRModule typed = hop(Stages.inferTypes(imported), blobs);
        IRModule optimized = hop(Stages.optimize(typed, 3), blobs);
        assertEquals(List.of(), StructuralEquality.diff(direct, optimized).stream().toList());
        if (src.format() == ModelFormat.ONNX) assertTrue(blobs.size() > 0, "weights above the inline limit went to the blob store");
        var a1 = Stages.codegen(direct, new CompileOptions(Target.host(), 3, Map.of()), tmp.resolve("x"));
        var a2 = Stages.codegen(optimized, new CompileOptions(Target.host(), 3, Map.of()), tmp.resolve("y"));
        assertEquals(a1.contentHash(), a2.contentHash());
        List<TuningTask> directTasks = Stages.tasks(direct, Target.host()), hopTasks = Stages.tasks(optimized, Target.host());
        assertEquals(directTasks.size(), hopTasks.size());
        for (int i = 0; i < directTasks.size(); i++) {
            TuningTask d = directTasks.get(i), h = hopTasks.get(i);
            assertEquals(List.of(d.key(), d.template(), d.space(), d.defaultConfig(), d.kernels()), List.of(h.key(), h.template(), h.space(), h.defaultConfig(), h.kernels()));
            assertTrue(StructuralEquality.equal(d.primitive(), h.primitive()), d.key());
        }
    }

    private static IRModule hop(IRModule m, InMemoryBlobStore blobs) {
        return IrJson.read(IrJson.write(m, blobs, IrJson.Options.DEFAULT), blobs);
    }

    @Test
    void archivePacksDeterministicallyAndUnpacksTheSameFiles(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("art");
        Files.createDirectories(dir.resolve("src"));
        Files.writeString(dir.resolve("manifest.json"), "{\"a\":1}\n");
        byte[] big = new byte[1500];
        for (int i = 0; i < big.length; i++) big[i] = (byte) (i * 31);
        Files.write(dir.resolve("src/kernels.c"), big);
        Files.write(dir.resolve("empty.bin"), new byte[0]);
        byte[] tar1 = ArtifactArchive.pack(dir);
        byte[] tar2 = ArtifactArchive.pack(dir);
        assertArrayEquals(tar1, tar2, "same directory, same bytes");
        List<Path> out = ArtifactArchive.unpack(new ByteArrayInputStream(tar1), tmp.resolve("copy"));
        assertEquals(3, out.size());
        assertArrayEquals(big, Files.readAllBytes(tmp.resolve("copy/src/kernels.c")));
        assertEquals("{\"a\":1}\n", Files.readString(tmp.resolve("copy/manifest.json")));
        assertEquals(0, Files.size(tmp.resolve("copy/empty.bin")));
        // the system tar reads it too, when there is one
        if (Files.isExecutable(Path.of("/usr/bin/tar")) || Files.isExecutable(Path.of("/bin/tar"))) {
            Path file = tmp.resolve("a.tar.gz");
            Files.write(file, tar1);
            Process p = new ProcessBuilder("tar", "-tzf", file.toString()).redirectErrorStream(true).start();
            String listing = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), listing);
            assertEquals(List.of("empty.bin", "manifest.json", "src/kernels.c"), listing.lines().toList());
        }
    }
}
