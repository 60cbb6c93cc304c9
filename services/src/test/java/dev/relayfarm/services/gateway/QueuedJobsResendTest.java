package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * Issue 13: with no importer running, the gateway's re-sends of compile.requested back off and stop. The re-send timer
 * runs for real here (every 100 ms, first copy after 300 ms, at most 3 copies); the context is closed after the class,
 * so its timer does not touch the QUEUED jobs of the other gateway tests afterwards.
 */
@TestPropertySource(properties = {"relayfarm.gateway.requeue-after=300ms", "relayfarm.gateway.requeue-check=100ms",
        "relayfarm.gateway.requeue-max-resends=3"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class QueuedJobsResendTest extends GatewayTestBase {

    @Test
    void aJobNobodyPicksUpGetsAtMostTheCappedCopiesSpacedByTheBackoffThenFails() throws Exception {
        UUID id = submitRelay("nobody-imports.relay");
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!"FAILED".equals(body(get("/api/v1/jobs/" + id)).path("status").asText())) {
            if (System.nanoTime() > deadline) throw new AssertionError("job not FAILED: " + get("/api/v1/jobs/" + id).body());
            Thread.sleep(100);
        }
        JsonNode job = body(get("/api/v1/jobs/" + id));
        assertEquals("gateway", job.path("error").path("stage").asText());
        String message = job.path("error").path("message").asText();
        assertTrue(message.matches("compile\\.requested was sent 4 times over \\d+ s and never picked up \u2014 is the importer running\\?"), message);

        // the submit's send and 3 copies, no more (the timer kept running past the failure)
        Thread.sleep(1_000);
        List<ConsumerRecord<String, String>> recs = records("compile.requested", id, 4);
        assertEquals(4, recs.size(), "records on compile.requested");
        assertEquals(3, jdbc.queryForObject("SELECT resend_count FROM jobs WHERE id = ?", Integer.class, id));
        // each copy waited about twice as long as the one before: >= 300, 600, 1200 ms (less a little clock slack)
        long expected = 300;
        for (int i = 1; i < recs.size(); i++, expected *= 2) {
            long gap = recs.get(i).timestamp() - recs.get(i - 1).timestamp();
            assertTrue(gap >= expected - 50 && gap < expected + 1_500, "copy " + i + " came " + gap + " ms after the one before, expected about " + expected);
        }
    }
}
