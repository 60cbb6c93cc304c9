package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchCommandTest {
    private static Path mnist() {
        Path dir = OnnxTestData.models().map(p -> p.resolve("mnist8_cntk")).orElse(null);
        assumeTrue(dir != null && Files.isDirectory(dir), "../shared/onnx/models/mnist8_cntk not found: skipped");
        return dir;
    }

    @Test
    void jsonLineHasTheIssueFieldsAndOutputsAgreeWithOnnxRuntime() throws Exception {
        CliRun r = CliRun.relayc("bench", mnist().toString(), "--backend", "interp", "--json", "--warmup", "1", "--iterations", "3", "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out().strip());
        assertEquals("mnist8_cntk", j.get("model").asText());
        assertEquals("onnxruntime", j.get("reference").asText());
        assertTrue(j.get("ours_ms").asDouble() > 0 && j.get("ort_ms").asDouble() > 0, r.out());
        assertEquals(j.get("ours_ms").asDouble() / j.get("ort_ms").asDouble(), j.get("ratio").asDouble(), 1e-3 * j.get("ratio").asDouble() + 1e-4);
        // The interpreter and ORT compute the same digits up to float32 rounding.
        assertTrue(j.get("max_abs_diff").asDouble() < 1e-3, r.out());
    }

    @Test
    void compiledArtifactAgreesWithOnnxRuntime(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        CliRun r = CliRun.relayc("bench", mnist().toString(), "--json", "--warmup", "1", "--iterations", "3", "--keep", tmp.toString());
        assertEquals(0, r.exitCode(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out().strip());
        assertEquals("relayfarm-c", j.get("ours").asText());
        assertTrue(j.get("max_abs_diff").asDouble() < 1e-3, r.out());
        assertTrue(Files.isRegularFile(tmp.resolve("mnist8_cntk/manifest.json")), "--keep leaves the artifact");
    }

    @Test
    void tableForSeveralModelsEndsWithTheGeometricMean() {
        Path m = mnist();
        CliRun r = CliRun.relayc("bench", m.toString(), m.resolve("model.onnx").toString(), "--backend", "interp", "--warmup", "0", "--iterations", "2");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("ratio") && r.out().contains("geometric mean ratio ours/ort over 2 models"), r.out());
    }

    @Test
    void missingModelOrBadShapeIsAnErrorNamingIt(@TempDir Path tmp) throws Exception {
        Path m = mnist();
        CliRun r = CliRun.relayc("bench", tmp.resolve("missing.onnx").toString());
        assertEquals(2, r.exitCode());
        assertTrue(r.err().contains("missing.onnx") && r.err().contains("neither an .onnx file"), r.err());
        CliRun bad = CliRun.relayc("bench", m.toString(), "--shape", "Input3=1xq");
        assertEquals(2, bad.exitCode());
        assertTrue(bad.err().contains("--shape expects NAME=D0xD1x"), bad.err());
    }

    /**
     * A dynamic model (PaddleOCR's direction classifier with its batch left dynamic) compiled once for the VM and run at
     * each --at size against ONNX Runtime, then against the same model compiled with that size pinned.
     */
    @Test
    void aDynamicModelIsCompiledOnceAndRunAtEverySizeGiven(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        Path onnx = dev.relayfarm.frontend.RapidOcrModels.copy("ch_ppocr_mobile_v2.0_cls_infer.onnx", tmp.resolve("ppocr_cls.onnx"));
        CliRun r = CliRun.relayc("bench", onnx.toString(), "--shape", "x=?x3x48x192", "--at", "x=1x3x48x192", "--at", "x=3x3x48x192",
                "--json", "--warmup", "0", "--iterations", "1", "--threads", "1");
        assertEquals(0, r.exitCode(), r.err());
        String[] lines = r.out().strip().split("\n");
        assertEquals(2, lines.length, r.out());
        for (int i = 0; i < 2; i++) {
            JsonNode j = new ObjectMapper().readTree(lines[i]);
            assertEquals("ppocr_cls@x=" + (i == 0 ? 1 : 3) + "x3x48x192", j.get("model").asText());
            assertEquals("relayfarm-vm", j.get("ours").asText(), "a dynamic batch runs on the VM");
            assertTrue(j.get("max_abs_diff").asDouble() < 1e-4, r.out());
        }
        CliRun pinned = CliRun.relayc("bench", onnx.toString(), "--shape", "x=?x3x48x192", "--at", "x=2x3x48x192", "--vs", "pinned",
                "--json", "--warmup", "0", "--iterations", "1", "--threads", "1");
        assertEquals(0, pinned.exitCode(), pinned.err());
        JsonNode j = new ObjectMapper().readTree(pinned.out().strip());
        assertEquals("relayfarm-c-pinned", j.get("reference").asText(), pinned.out());
        assertTrue(j.get("max_abs_diff").asDouble() < 1e-5, pinned.out());
        CliRun noSizes = CliRun.relayc("bench", onnx.toString(), "--vs", "pinned");
        assertEquals(2, noSizes.exitCode());
        assertTrue(noSizes.err().contains("give --at"), noSizes.err());
    }

    /** --schedules compiles ours with the stored configs, --vs untuned measures the default-config artifact beside it. */
    @Test
    void tunedAgainstUntunedInOneRun(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        Path m = mnist();
        IRModule optimized = Stages.optimize(Stages.inferTypes(Stages.importModel(ModelSource.read(m.resolve("model.onnx")), Map.of())), 3,
                Target.host());
        TuningTask first = Stages.tasks(optimized, Target.host()).getFirst();
        ScheduleConfig other = TuningModels.nonDefault(first);
        Path schedules = tmp.resolve("schedules.jsonl");
        Files.writeString(schedules, "{\"workload\": \"" + first.key() + "\", \"config\": " + other.toJson() + "}\n");
        CliRun r = CliRun.relayc("bench", m.toString(), "--json", "--warmup", "1", "--iterations", "3", "--schedules", schedules.toString(),
                "--vs", "untuned", "--keep", tmp.resolve("kept").toString());
        assertEquals(0, r.exitCode(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out().strip());
        assertEquals("relayfarm-c-tuned", j.get("ours").asText());
        assertEquals("relayfarm-c-untuned", j.get("reference").asText());
        assertTrue(j.get("max_abs_diff").asDouble() < 1e-3, "a schedule changes the loops, not the result: " + r.out());
        JsonNode tuned = new ObjectMapper().readTree(tmp.resolve("kept/mnist8_cntk/manifest.json").toFile());
        JsonNode untuned = new ObjectMapper().readTree(tmp.resolve("kept/mnist8_cntk-untuned/manifest.json").toFile());
        assertEquals(new ObjectMapper().readTree(other.toJson()), configOf(tuned, first.key()));
        assertEquals(new ObjectMapper().readTree(first.defaultConfig().toJson()), configOf(untuned, first.key()));
    }

    @Test
    void schedulesNeedTheCompiledBackend() {
        CliRun r = CliRun.relayc("bench", mnist().toString(), "--backend", "interp", "--vs", "untuned", "--schedules", "s.jsonl");
        assertEquals(2, r.exitCode(), "an option error, like bench's others");
        assertTrue(r.err().contains("use --backend c"), r.err());
        CliRun same = CliRun.relayc("bench", mnist().toString(), "--vs", "untuned");
        assertEquals(2, same.exitCode());
        assertTrue(same.err().contains("give --schedules"), "untuned against untuned would compare an artifact with itself: " + same.err());
    }

    private static JsonNode configOf(JsonNode manifest, String workload) {
        for (JsonNode k : manifest.get("kernels")) if (k.get("workload").asText().equals(workload)) return k.get("config");
        throw new AssertionError("no kernel of workload " + workload + " in " + manifest);
    }
}
