package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.frontend.OnnxTestData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Real models through the farm: uploaded over REST, through every stage over Kafka, artifact downloaded as
 * tar.gz, run, and compared with the ONNX reference outputs. Both jobs are in flight at the same time.
 */
@ExtendWith(E2eFarmExtension.class)
class CompileModelsTest {
    /** Test folders under ../shared/onnx/models and the input shapes their jobs declare. */
    static final Map<String, String> MODELS = Map.of("mnist8_cntk", "", "ppocr_cls_mobilenetv3", "x=1x3x48x192");

    @Test
    void compilesRunsAndMatchesTheReferenceOutputs(E2eFarm farm) throws Exception {
        Path models = OnnxTestData.models().orElse(null);
        assumeTrue(models != null, "skipped: no ONNX model folder (../shared/onnx/models beside the checkout, or RELAYFARM_ONNX_DIR)");
        Map<String, String> ids = new java.util.TreeMap<>();
        for (var m : MODELS.entrySet()) {
            Path dir = models.resolve(m.getKey());
            assumeTrue(Files.isRegularFile(dir.resolve("model.onnx")), "skipped: " + dir + " is missing");
            ids.put(m.getKey(), farm.submit(dir.resolve("model.onnx"), m.getValue()));
        }
        for (var e : ids.entrySet()) {
            JsonNode job = farm.await(e.getValue());
            assertEquals("SUCCEEDED", job.path("status").asText(), e.getKey() + ": " + job);
            Path artifact = farm.client.downloadArtifact(e.getValue(), farm.work.resolve("download-" + e.getValue()));
            OnnxCheck.Result r = ArtifactCheck.check(models.resolve(e.getKey()), artifact);
            System.out.printf("%s: job %s %s; end to end %d ms; stages %s%n", e.getKey(), e.getValue(), r.line(),
                    farm.endToEndMs(e.getValue()), farm.stageTimings(e.getValue()));
            assertEquals(OnnxCheck.Status.PASS, r.status(), e.getKey() + ": " + r.line());
            assertEquals(1, farm.count("SELECT count(*) FROM artifacts WHERE job_id = ?", e.getValue()));
        }
    }
}
