package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** GET /api/v1/jobs/{id}/events: replay, live events until terminal, Last-Event-ID resume. */
class JobEventsTest extends GatewayTestBase {

    /** One parsed server-sent event. */
    record Sse(String id, String event, String data) {}

    @Test
    void replaysAFinishedJobAndEnds() throws Exception {
        UUID id = submitRelay("events-done.relay");
        Stages.started(jdbc, id, "import", "IMPORTING");
        Stages.finished(jdbc, id, "import", "IMPORTING", 7, 1);
        Stages.fail(jdbc, id, "infer", "type mismatch");

        List<Sse> events = stream(id, null);
        assertEquals(List.of("job-event", "job-event", "job-event", "job-event", "end"), events.stream().map(Sse::event).toList());
        List<String> kinds = new ArrayList<>();
        for (Sse e : events.subList(0, 4)) {
            JsonNode data = json.readTree(e.data());
            assertEquals(id.toString(), data.get("job_id").asText());
            assertEquals(e.id(), data.get("id").asText(), "the SSE id is the event's id");
            kinds.add(data.get("kind").asText() + "/" + data.get("status").asText());
        }
        assertEquals(List.of("QUEUED/QUEUED", "STARTED/IMPORTING", "FINISHED/IMPORTING", "FAILED/FAILED"), kinds);
        assertEquals(7, json.readTree(events.get(2).data()).get("duration_ms").asInt());
        assertEquals("FAILED", json.readTree(events.get(4).data()).get("status").asText());

        // Resume after the second event: only what came later.
        List<Sse> resumed = stream(id, events.get(1).id());
        assertEquals(List.of(events.get(2).id(), events.get(3).id()), resumed.subList(0, 2).stream().map(Sse::id).toList());
        assertEquals("end", resumed.get(2).event());
        assertEquals(3, resumed.size());

        assertProblem(send(authed("/api/v1/jobs/" + id + "/events").header("Accept", "text/event-stream")
                .header("Last-Event-ID", "yesterday").GET().build()), 400, "Last-Event-ID must be an event id");
    }

    @Test
    void streamsNewEventsUntilTheJobIsTerminal() throws Exception {
        UUID id = submitRelay("events-live.relay");
        CompletableFuture<List<Sse>> reader = CompletableFuture.supplyAsync(() -> stream(id, null));
        Thread.sleep(300);  // the stream is open and has sent the replay (QUEUED)
        assertTrue(!reader.isDone(), "a QUEUED job's stream stays open");
        Stages.started(jdbc, id, "import", "IMPORTING");
        Thread.sleep(150);
        Stages.finished(jdbc, id, "import", "IMPORTING", 3, 1);
        Stages.succeed(jdbc, id, new byte[] {9, 9}, "live");
        List<Sse> events = reader.get(20, TimeUnit.SECONDS);
        List<String> kinds = new ArrayList<>();
        for (Sse e : events) kinds.add(e.event().equals("end") ? "end" : json.readTree(e.data()).get("kind").asText());
        assertEquals(List.of("QUEUED", "STARTED", "FINISHED", "SUCCEEDED", "end"), kinds);
    }

    @Test
    void aCancelEndsTheStream() throws Exception {
        UUID id = submitRelay("events-cancel.relay");
        CompletableFuture<List<Sse>> reader = CompletableFuture.supplyAsync(() -> stream(id, null));
        Thread.sleep(300);
        assertEquals(200, post("/api/v1/jobs/" + id + "/cancel").statusCode());
        List<Sse> events = reader.get(20, TimeUnit.SECONDS);
        assertEquals("CANCELLED", json.readTree(events.get(events.size() - 2).data()).get("kind").asText());
        assertEquals("{\"status\":\"CANCELLED\"}", events.getLast().data());
    }

    /** Reads one whole event stream (the server ends it at the terminal state); fails after 20 s. */
    private List<Sse> stream(UUID id, String lastEventId) {
        HttpRequest.Builder req = authed("/api/v1/jobs/" + id + "/events").header("Accept", "text/event-stream").timeout(Duration.ofSeconds(20));
        if (lastEventId != null) req.header("Last-Event-ID", lastEventId);
        try {
            HttpResponse<InputStream> r = http.send(req.GET().build(), HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, r.statusCode());
            assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"));
            List<Sse> out = new ArrayList<>();
            try (var in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                String line, eid = null, event = "message";
                StringBuilder data = new StringBuilder();
                while ((line = in.readLine()) != null) {
                    if (line.isEmpty()) {
                        if (!data.isEmpty()) out.add(new Sse(eid, event, data.toString()));
                        eid = null;
                        event = "message";
                        data.setLength(0);
                    } else if (line.startsWith("id:")) {
                        eid = line.substring(3).trim();
                    } else if (line.startsWith("event:")) {
                        event = line.substring(6).trim();
                    } else if (line.startsWith("data:")) {
                        data.append(line.substring(5));
                    }
                }
            }
            return out;
        } catch (Exception e) {
            throw new AssertionError("event stream of " + id, e);
        }
    }
}
