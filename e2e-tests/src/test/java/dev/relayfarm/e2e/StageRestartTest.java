package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.conformance.OnnxCheck;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.services.kit.Stage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A stage service stopped while a job is in it and started again: the job still succeeds, exactly once (one
 * codegen stage result, one artifact row, one SUCCEEDED event), and its artifact is right. Codegen runs in its
 * own Spring context ({@code relayfarm.roles=codegen}), the way a separate service process would; closing the
 * context is that process going away (its consumer leaves the group, uncommitted work is redelivered).
 */
@ExtendWith(E2eFarmExtension.class)
class StageRestartTest {
    @Test
    void aStageRestartedMidJobFinishesItExactlyOnce(E2eFarm farm) throws Exception {
        Path dir = OnnxTestData.models().map(m -> m.resolve("ppocr_cls_mobilenetv3")).orElse(null);
        assumeTrue(dir != null && Files.isRegularFile(dir.resolve("model.onnx")),
                "skipped: no ../shared/onnx/models/ppocr_cls_mobilenetv3 (or RELAYFARM_ONNX_DIR)");
        String id = farm.submit(dir.resolve("model.onnx"), "x=1x3x48x192");
        long deadline = System.nanoTime() + 120_000_000_000L;
        String status;
        do {
            status = farm.client.job(id).path("status").asText();
            if (status.equals("GENERATING") || status.equals("SUCCEEDED") || status.equals("FAILED")) break;
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        assertEquals("GENERATING", status, "the job should reach codegen");

        long t = System.nanoTime();
        String whileDown;
        try {
            farm.stopSeparateStage();
            long stopMs = (System.nanoTime() - t) / 1_000_000;
            Thread.sleep(1000);
            whileDown = farm.client.job(id).path("status").asText();
            // Either the stop cut the work short (the job waits in GENERATING, its message uncommitted, for the restart
            // to redo it), or the work had already written its result when the interrupt came (the job is SUCCEEDED and
            // the uncommitted message comes back after the restart, to be recognized as done). Both must end exactly once.
            System.out.printf("codegen stopped in %d ms with job %s in it; a second later the job is %s (%s)%n", stopMs, id, whileDown,
                    whileDown.equals("GENERATING") ? "work cut short: the restart redoes it" : "work finished during the stop: the restart sees it done");
            assertTrue(whileDown.equals("GENERATING") || whileDown.equals("SUCCEEDED"), whileDown);
        } finally {
            farm.startSeparateStage();
        }

        JsonNode job = farm.await(id);
        farm.awaitNoLag(Stage.CODEGEN.consumerGroup(), Stage.CODEGEN.inputTopic, Duration.ofSeconds(60));
        long started = farm.count("SELECT count(*) FROM job_events WHERE job_id = ? AND stage = 'codegen' AND kind = 'STARTED'", id);
        System.out.printf("job %s after the restart: %s; codegen STARTED %d time(s)%n", id, job.path("status").asText(), started);
        assertEquals("SUCCEEDED", job.path("status").asText(), job.toString());
        if (whileDown.equals("GENERATING")) assertEquals(2, started, "codegen started the job before the stop and again after the restart");
        assertEquals(1, farm.count("SELECT count(*) FROM artifacts WHERE job_id = ?", id), "exactly one artifact");
        assertEquals(1, farm.count("SELECT count(*) FROM stage_results WHERE job_id = ? AND stage = 'codegen'", id));
        assertEquals(1, farm.count("SELECT count(*) FROM job_events WHERE job_id = ? AND kind = 'SUCCEEDED'", id));
        Path artifact = farm.client.downloadArtifact(id, farm.work.resolve("restart-" + id));
        OnnxCheck.Result r = ArtifactCheck.check(dir, artifact);
        assertEquals(OnnxCheck.Status.PASS, r.status(), r.line());
    }
}
