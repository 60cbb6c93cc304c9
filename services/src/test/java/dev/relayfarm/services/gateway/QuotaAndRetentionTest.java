package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.serde.Sha256;
import dev.relayfarm.services.store.RetentionSweeper;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * Issue 13: per-token quotas (429 problem+json naming the quota and the use) and the retention of finished jobs'
 * bytes (artifact 410 Gone, shared blobs kept), over the real PostgreSQL. A token of its own, so the other gateway
 * tests' QUEUED jobs do not count against its quotas.
 */
@TestPropertySource(properties = {"relayfarm.token=" + QuotaAndRetentionTest.QUOTA_TOKEN, "relayfarm.gateway.quota.max-active-jobs=2",
        "relayfarm.gateway.quota.max-stored-uploads=1KB"})
class QuotaAndRetentionTest extends GatewayTestBase {
    static final String QUOTA_TOKEN = "quota-token-9d2e";

    @Autowired
    RetentionSweeper sweeper;

    @Override
    java.net.http.HttpRequest.Builder authed(String path) {
        return java.net.http.HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + QUOTA_TOKEN);
    }

    /** Each test starts with a token that has no active jobs and no kept uploads (the other test's are written off). */
    @org.junit.jupiter.api.BeforeEach
    void clearTheTokensUse() {
        jdbc.update("""
                UPDATE jobs SET status = CASE WHEN status IN ('SUCCEEDED', 'FAILED') THEN status ELSE 'CANCELLED' END,
                    finished_at = coalesce(finished_at, now()), expired_at = coalesce(expired_at, now() - interval '1 day')
                WHERE token_id = ?""", GatewayToken.id(QUOTA_TOKEN));
    }

    private static byte[] relay(int size) {
        StringBuilder b = new StringBuilder(RELAY);
        b.append("// ").append(UUID.randomUUID());
        while (b.length() < size - 1) b.append('x');
        return b.append('\n').toString().getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void quotasLimitActiveJobsAndKeptUploadsPerToken() {
        UUID a = submitRelay("a.relay");
        UUID b = submitRelay("b.relay");
        JsonNode p = assertProblem(submit(new Form().file("model", "c.relay", relay(100))), 429, "this token has 2 jobs queued or running, the limit is 2");
        assertEquals("max-active-jobs", p.path("quota").asText());
        assertEquals(2, p.path("limit").asInt());
        assertEquals(2, p.path("current").asInt());
        assertEquals("/api/v1/docs#problem-quota-exceeded", p.path("type").asText());

        // cancelled jobs leave the active count, not the kept uploads (RELAY is one model: stored once, counted once)
        assertEquals(200, post("/api/v1/jobs/" + a + "/cancel").statusCode());
        assertEquals(200, post("/api/v1/jobs/" + b + "/cancel").statusCode());
        long kept = RELAY.getBytes(StandardCharsets.UTF_8).length;
        UUID big = UUID.fromString(body(submit(new Form().file("model", "big.relay", relay(700)))).path("id").asText());
        assertEquals(200, post("/api/v1/jobs/" + big + "/cancel").statusCode());
        kept += 700;
        JsonNode q = assertProblem(submit(new Form().file("model", "more.relay", relay(400))), 429,
                "this token's kept uploads take " + kept + " bytes, this upload of 400 bytes would make " + (kept + 400) + ", the limit is 1024 bytes");
        assertEquals("max-stored-uploads", q.path("quota").asText());
        assertEquals(kept, q.path("current").asLong());
        // the same model again adds nothing to what is kept
        assertEquals(201, submit(new Form().file("model", "again.relay", RELAY.getBytes(StandardCharsets.UTF_8))).statusCode());
        // no job row was written for the refused submits (earlier tests' jobs of this token were written off by clearTheTokensUse)
        assertEquals(4, jdbc.queryForObject("SELECT count(*) FROM jobs WHERE token_id = ? AND expired_at IS NULL", Integer.class, GatewayToken.id(QUOTA_TOKEN)));
    }

    @Test
    void bytesOfJobsFinishedLongAgoAreDeletedButSharedBlobsStay() {
        byte[] model = relay(200);
        UUID old = UUID.fromString(body(submit(new Form().file("model", "old.relay", model))).path("id").asText());
        assertEquals(200, post("/api/v1/jobs/" + old + "/cancel").statusCode()); // out of the active-jobs quota
        // the old job succeeded 8 days ago: an artifact and an IR document only it uses, and its model ...
        byte[] tar = ("tar of " + old).getBytes(StandardCharsets.UTF_8);
        byte[] ir = ("{\"ir\": \"" + old + "\"}").getBytes(StandardCharsets.UTF_8);
        String tarSha = Sha256.hex(tar), irSha = Sha256.hex(ir), modelSha = Sha256.hex(model);
        jdbc.update("INSERT INTO blobs (sha256, size_bytes, bytes) VALUES (?, ?, ?)", irSha, (long) ir.length, ir);
        Stages.artifact(jdbc, old, tar, "hash-" + old);
        // cancelled above only to leave the active-jobs quota, yet succeeded for this test: a history JobStore refuses
        // (nothing leaves CANCELLED), so it is made up here directly
        jdbc.update("UPDATE jobs SET status = 'SUCCEEDED', updated_at = now(), finished_at = now() WHERE id = ?", old);
        jdbc.update("INSERT INTO job_events (job_id, stage, kind, status) VALUES (?, 'codegen', 'SUCCEEDED', 'SUCCEEDED')", old);
        jdbc.update("INSERT INTO job_blobs (job_id, sha256) VALUES (?, ?), (?, ?)", old, tarSha, old, irSha);
        jdbc.update("UPDATE jobs SET finished_at = now() - interval '8 days' WHERE id = ?", old);
        jdbc.update("UPDATE blobs SET touched_at = now() - interval '8 days' WHERE sha256 IN (?, ?, ?)", tarSha, irSha, modelSha);
        assertEquals(200, get("/api/v1/jobs/" + old + "/artifact").statusCode());
        // ... which a live job uses too; and a job finished yesterday keeps everything
        UUID live = UUID.fromString(body(submit(new Form().file("model", "same.relay", model))).path("id").asText());
        UUID recent = submitRelay("recent.relay");
        byte[] recentTar = ("tar of " + recent).getBytes(StandardCharsets.UTF_8);
        Stages.succeed(jdbc, recent, recentTar, "hash-" + recent);
        jdbc.update("UPDATE jobs SET finished_at = now() - interval '1 day' WHERE id = ?", recent);

        RetentionSweeper.Swept swept = sweeper.sweep();
        assertTrue(swept.jobs() >= 1 && swept.blobs() >= 2, swept.toString());

        assertProblem(get("/api/v1/jobs/" + old + "/artifact"), 410, "was deleted at");
        assertFalse(blobExists(tarSha), "the old artifact's archive is deleted");
        assertFalse(blobExists(irSha), "the old job's IR is deleted");
        assertTrue(blobExists(modelSha), "the model is kept: job " + live + " uses it");
        // the job's record and history stay
        JsonNode j = body(get("/api/v1/jobs/" + old));
        assertEquals("SUCCEEDED", j.path("status").asText());
        assertEquals(model.length, j.path("model").path("size_bytes").asLong());
        assertEquals(3, jdbc.queryForObject("SELECT count(*) FROM job_events WHERE job_id = ?", Integer.class, old), "QUEUED, CANCELLED, SUCCEEDED");
        assertEquals(200, get("/api/v1/jobs/" + recent + "/artifact").statusCode());
        assertTrue(blobExists(Sha256.hex(recentTar)));

        // once the live job has finished long ago too, the model goes as well
        assertEquals(200, post("/api/v1/jobs/" + live + "/cancel").statusCode());
        jdbc.update("UPDATE jobs SET finished_at = now() - interval '8 days' WHERE id = ?", live);
        // the live job's upload of the same bytes touched the blob: within the grace it stays whoever uses it
        assertTrue(jdbc.queryForObject("SELECT touched_at > now() - interval '1 minute' FROM blobs WHERE sha256 = ?", Boolean.class, modelSha));
        sweeper.sweep();
        assertTrue(blobExists(modelSha), "touched within the last hour");
        jdbc.update("UPDATE blobs SET touched_at = now() - interval '8 days' WHERE sha256 = ?", modelSha);
        sweeper.sweep();
        assertFalse(blobExists(modelSha));
        assertEquals("CANCELLED", body(get("/api/v1/jobs/" + live)).path("status").asText());
    }

    @Autowired
    dev.relayfarm.services.store.BlobRefs refs;

    @Test
    void anIrDocumentIsRecordedWithTheStoredBlobsItNames() {
        UUID job = submitRelay("refs.relay");
        String t1 = blobs(("tensor 1 " + job).getBytes(StandardCharsets.UTF_8)), t2 = blobs(("tensor 2 " + job).getBytes(StandardCharsets.UTF_8));
        String unknown = Sha256.hex(("never stored " + job).getBytes(StandardCharsets.UTF_8));
        String doc = blobs(("{\"functions\": [{\"params\": [{\"blob\": \"" + t1 + "\"}]}], \"tensors\": {\"w\": {\"sha256\": \"" + t2
                + "\"}, \"x\": \"" + unknown + "\"}}").getBytes(StandardCharsets.UTF_8));
        refs.recordIr(job, doc);
        var recorded = new java.util.HashSet<>(jdbc.queryForList("SELECT trim(sha256) FROM job_blobs WHERE job_id = ?", String.class, job));
        assertEquals(java.util.Set.of(Sha256.hex(RELAY.getBytes(StandardCharsets.UTF_8)), doc, t1, t2), recorded);
    }

    private String blobs(byte[] bytes) {
        String sha = Sha256.hex(bytes);
        jdbc.update("INSERT INTO blobs (sha256, size_bytes, bytes) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", sha, (long) bytes.length, bytes);
        return sha;
    }

    private boolean blobExists(String sha) {
        return jdbc.queryForObject("SELECT count(*) FROM blobs WHERE sha256 = ?", Integer.class, sha) == 1;
    }
}
