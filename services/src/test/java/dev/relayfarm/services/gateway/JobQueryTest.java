package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.serde.Sha256;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** GET job, list, cancel and artifact download, with the stages' writes done directly in the database. */
class JobQueryTest extends GatewayTestBase {

    @Test
    void aQueuedJobAsTheApiShowsIt() {
        UUID id = submitRelay("tiny.relay");
        HttpResponse<String> r = get("/api/v1/jobs/" + id);
        assertEquals(200, r.statusCode(), r.body());
        JsonNode j = body(r);
        assertEquals(id.toString(), j.get("id").asText());
        assertEquals("QUEUED", j.get("status").asText());
        assertEquals("tiny.relay", j.get("model").get("name").asText());
        assertEquals("relay", j.get("model").get("format").asText());
        assertEquals(RELAY.getBytes(StandardCharsets.UTF_8).length, j.get("model").get("size_bytes").asInt());
        assertEquals("c -mcpu=native", j.get("target").asText());
        assertEquals(3, j.get("opt_level").asInt());
        assertTrue(j.get("finished_at").isNull());
        assertTrue(j.get("error").isNull());
        assertTrue(j.get("artifact").isNull());
        assertEquals(0, j.get("stages").size());
        assertEquals("/api/v1/jobs/" + id + "/cancel", j.get("links").get("cancel").asText());
        assertFalse(j.get("links").has("artifact"));
    }

    @Test
    void unknownAndMalformedIds() {
        UUID unknown = UUID.randomUUID();
        JsonNode p = assertProblem(get("/api/v1/jobs/" + unknown), 404, "no job with id " + unknown);
        assertEquals("/api/v1/docs#problem-job-not-found", p.get("type").asText());
        assertProblem(get("/api/v1/jobs/not-a-uuid"), 400, "not a job id: 'not-a-uuid'");
        assertProblem(get("/api/v1/jobs/1-1-1-1-1"), 400, "not a job id");
        assertProblem(post("/api/v1/jobs/" + unknown + "/cancel"), 404, unknown.toString());
        assertProblem(post("/api/v1/jobs/xyz/cancel"), 400, "'xyz'");
        assertProblem(get("/api/v1/jobs/" + unknown + "/artifact"), 404, unknown.toString());
        assertProblem(get("/api/v1/jobs/" + unknown + "/events"), 404, unknown.toString());
        // An event-stream client gets the problem too, not a 406.
        assertProblem(send(authed("/api/v1/jobs/" + unknown + "/events").header("Accept", "text/event-stream").GET().build()), 404, unknown.toString());
    }

    @Test
    void stageTimingsErrorAndArtifactOfAFinishedJob() {
        UUID ok = submitRelay("done.relay");
        Stages.started(jdbc, ok, "import", "IMPORTING");
        Stages.finished(jdbc, ok, "import", "IMPORTING", 120, 1);
        Stages.started(jdbc, ok, "infer", "TYPING");
        Stages.retry(jdbc, ok, "infer", "TYPING");
        Stages.finished(jdbc, ok, "infer", "TYPING", 40, 2);
        byte[] tar = {0x1f, (byte) 0x8b, 8, 0, 1, 2, 3, 4, 5};
        HttpResponse<String> early = get("/api/v1/jobs/" + ok + "/artifact");
        JsonNode p = assertProblem(early, 409, "is TYPING; its artifact exists once it is SUCCEEDED");
        assertEquals("/api/v1/docs#problem-artifact-not-ready", p.get("type").asText());
        Stages.succeed(jdbc, ok, tar, "content-abc");

        JsonNode j = body(get("/api/v1/jobs/" + ok));
        assertEquals("SUCCEEDED", j.get("status").asText());
        assertFalse(j.get("finished_at").isNull());
        List<String> stages = new ArrayList<>();
        j.get("stages").forEach(s -> stages.add(s.get("stage").asText() + ":" + s.get("status").asText() + ":"
                + s.get("duration_ms").asLong() + ":" + s.get("attempts").asInt()));
        assertEquals(List.of("import:FINISHED:120:1", "infer:FINISHED:40:2"), stages);
        JsonNode a = j.get("artifact");
        assertEquals("content-abc", a.get("content_hash").asText());
        assertEquals(Sha256.hex(tar), a.get("tar_sha256").asText());
        assertEquals(tar.length, a.get("size_bytes").asInt());
        assertEquals("/api/v1/jobs/" + ok + "/artifact", a.get("url").asText());
        assertFalse(j.get("links").has("cancel"));

        HttpResponse<byte[]> download = sendBytes("/api/v1/jobs/" + ok + "/artifact");
        assertEquals(200, download.statusCode());
        assertEquals("application/gzip", download.headers().firstValue("Content-Type").orElse(""));
        assertEquals("\"" + Sha256.hex(tar) + "\"", download.headers().firstValue("ETag").orElse(""));
        assertTrue(download.headers().firstValue("Content-Disposition").orElse("").contains("done-" + ok + ".tar.gz"));
        assertArrayEquals(tar, download.body());

        UUID bad = submitRelay("bad.relay");
        Stages.started(jdbc, bad, "import", "IMPORTING");
        Stages.finished(jdbc, bad, "import", "IMPORTING", 10, 1);
        Stages.started(jdbc, bad, "infer", "TYPING");
        Stages.fail(jdbc, bad, "infer", "type error at bad.relay:1:30: nn.relu expects a tensor", "relation-violated");
        JsonNode f = body(get("/api/v1/jobs/" + bad));
        assertEquals("FAILED", f.get("status").asText());
        assertEquals("infer", f.get("error").get("stage").asText());
        assertEquals("type error at bad.relay:1:30: nn.relu expects a tensor", f.get("error").get("message").asText());
        assertEquals("relation-violated", f.get("error").get("code").asText(), "a user error's diagnostic code");
        assertEquals("FAILED", f.get("stages").get(1).get("status").asText());
        assertTrue(f.get("artifact").isNull());
        assertProblem(get("/api/v1/jobs/" + bad + "/artifact"), 409, "is FAILED; only SUCCEEDED jobs have an artifact");
    }

    @Test
    void listNewestFirstWithStatusFilterAndLimit() {
        UUID first = submitRelay("list-a.relay");
        UUID second = submitRelay("list-b.relay");
        UUID third = submitRelay("list-c.relay");
        Stages.fail(jdbc, second, "import", "broken");

        JsonNode all = body(get("/api/v1/jobs?limit=3"));
        assertEquals(3, all.get("count").asInt());
        assertEquals(List.of(third.toString(), second.toString(), first.toString()), ids(all));
        JsonNode failed = body(get("/api/v1/jobs?status=FAILED&limit=500"));
        assertTrue(ids(failed).contains(second.toString()));
        failed.get("jobs").forEach(j -> assertEquals("FAILED", j.get("status").asText()));
        assertEquals("import", failed.get("jobs").get(0).get("error_stage").asText());
        JsonNode queued = body(get("/api/v1/jobs?status=queued"));
        assertFalse(ids(queued).contains(second.toString()));
        assertTrue(ids(queued).contains(third.toString()));
        assertEquals(50, queued.get("limit").asInt(), "default limit");

        assertProblem(get("/api/v1/jobs?status=DONE"), 400, "status must be one of QUEUED, IMPORTING");
        assertProblem(get("/api/v1/jobs?limit=501"), 400, "limit must be an integer in 1..500, got '501'");
        assertProblem(get("/api/v1/jobs?limit=0"), 400, "got '0'");
        assertProblem(get("/api/v1/jobs?limit=ten"), 400, "got 'ten'");
    }

    @Test
    void cancelOnceThenConflict() throws Exception {
        UUID id = submitRelay("cancel-me.relay");
        Stages.started(jdbc, id, "import", "IMPORTING");
        HttpResponse<String> r = post("/api/v1/jobs/" + id + "/cancel");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode j = body(r);
        assertEquals("CANCELLED", j.get("status").asText());
        assertFalse(j.get("finished_at").isNull());
        assertEquals("CANCELLED", j.get("stages").get(0).get("status").asText(), "the interrupted stage says so");
        assertEquals(List.of("QUEUED", "STARTED", "CANCELLED"),
                jdbc.queryForList("SELECT kind FROM job_events WHERE job_id = ? ORDER BY id", String.class, id));
        // The gateway's own events are on job.events too (the test's STARTED row was written directly, not published).
        List<String> published = new ArrayList<>();
        for (var rec : records("job.events", id, 2)) {
            JsonNode e = json.readTree(rec.value());
            assertEquals(List.of(), MessageSchemas.errors("job.events", e));
            published.add(e.get("kind").asText());
        }
        assertEquals(List.of("QUEUED", "CANCELLED"), published);
        JsonNode again = assertProblem(post("/api/v1/jobs/" + id + "/cancel"), 409, "is already CANCELLED");
        assertEquals("/api/v1/docs#problem-job-terminal", again.get("type").asText());

        UUID done = submitRelay("finished.relay");
        Stages.succeed(jdbc, done, new byte[] {1, 2, 3}, "h");
        assertProblem(post("/api/v1/jobs/" + done + "/cancel"), 409, "is already SUCCEEDED");
        assertEquals("SUCCEEDED", jobRow(done).get("status"));
        assertProblem(get("/api/v1/jobs/" + id + "/artifact"), 409, "is CANCELLED");
    }

    private static List<String> ids(JsonNode list) {
        List<String> out = new ArrayList<>();
        list.get("jobs").forEach(j -> out.add(j.get("id").asText()));
        return out;
    }

    private HttpResponse<byte[]> sendBytes(String path) {
        try {
            return http.send(authed(path).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aStageErrorReachesTheClientAsTheStageWroteIt() {
        // the library words shape errors for both audiences (the shapes field, the CLI's --shape): the gateway adds nothing
        UUID id = submitRelay("shaped.relay");
        Stages.fail(jdbc, id, "import", "m.onnx: a shape is given for 'y', which is not a graph input");
        assertEquals("m.onnx: a shape is given for 'y', which is not a graph input", body(get("/api/v1/jobs/" + id)).path("error").path("message").asText());
    }
}
