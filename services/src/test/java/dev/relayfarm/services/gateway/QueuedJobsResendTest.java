package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * Issue 13: with no importer running, the gateway's re-sends of compile.requested back off and stop; with one alive (busy
 * with a backlog) the job waits on past the cap. The re-send timer
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
        // every re-send as the database recorded it (resend_count -> last_sent_at); the DB's clock on both sides
        Map<Integer, Instant> sentAt = new TreeMap<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!"FAILED".equals(body(get("/api/v1/jobs/" + id)).path("status").asText())) {
            if (System.nanoTime() > deadline) throw new AssertionError("job not FAILED: " + get("/api/v1/jobs/" + id).body());
            recordResend(id, sentAt);
            Thread.sleep(20);
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
        // each copy waited at least twice as long as the one before: >= 300, 600, 1200 ms after the previous send (lower
        // bounds only: a loaded machine may be late, never early). Copies the polling missed are skipped.
        sentAt.put(0, jdbc.queryForObject("SELECT created_at FROM jobs WHERE id = ?", java.sql.Timestamp.class, id).toInstant());
        for (int copy = 1; copy <= 3; copy++) {
            if (!sentAt.containsKey(copy) || !sentAt.containsKey(copy - 1)) continue;
            long gap = Duration.between(sentAt.get(copy - 1), sentAt.get(copy)).toMillis();
            long expected = 300L << (copy - 1);
            assertTrue(gap >= expected, "copy " + copy + " came " + gap + " ms after the send before, expected at least " + expected);
        }
        assertTrue(sentAt.containsKey(3), "the last copy observed: " + sentAt);
    }

    @Test
    void aJobWhoseImporterIsAliveButBusyIsNotFailedAfterTheCap() throws Exception {
        // an importer consumer thread that reports itself alive (as its watchdog does every few seconds) but never gets
        // to this job: it is working through a backlog
        String consumer = "test-busy-importer-" + UUID.randomUUID();
        jdbc.update("INSERT INTO stage_consumers (id, stage, alive, restarts, busy_job) VALUES (?, 'import', true, 0, ?)", consumer, UUID.randomUUID());
        try {
            UUID id = submitRelay("busy-importer.relay");
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (jdbc.queryForObject("SELECT resend_count FROM jobs WHERE id = ?", Integer.class, id) < 3) {
                if (System.nanoTime() > deadline) throw new AssertionError("3 copies not sent: " + get("/api/v1/jobs/" + id).body());
                jdbc.update("UPDATE stage_consumers SET heartbeat_at = now() WHERE id = ?", consumer);
                Thread.sleep(100);
            }
            // without a live importer the job would FAIL 1.2 s * 2 = 2.4 s after the third copy; wait well past that
            for (int i = 0; i < 60; i++) {
                jdbc.update("UPDATE stage_consumers SET heartbeat_at = now() WHERE id = ?", consumer);
                Thread.sleep(100);
            }
            assertEquals("QUEUED", body(get("/api/v1/jobs/" + id)).path("status").asText(), "a job whose importer is alive keeps waiting");
            assertEquals(3, jdbc.queryForObject("SELECT resend_count FROM jobs WHERE id = ?", Integer.class, id), "no copy beyond the cap");

            // the importer goes away: the job fails with the reason that names it
            jdbc.update("DELETE FROM stage_consumers WHERE id = ?", consumer);
            deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!"FAILED".equals(body(get("/api/v1/jobs/" + id)).path("status").asText())) {
                if (System.nanoTime() > deadline) throw new AssertionError("job not FAILED after the importer went: " + get("/api/v1/jobs/" + id).body());
                Thread.sleep(100);
            }
            assertTrue(body(get("/api/v1/jobs/" + id)).path("error").path("message").asText().endsWith("is the importer running?"));
        } finally {
            jdbc.update("DELETE FROM stage_consumers WHERE id = ?", consumer);
        }
    }

    private void recordResend(UUID id, Map<Integer, Instant> sentAt) {
        jdbc.query("SELECT resend_count, last_sent_at FROM jobs WHERE id = ?", rs -> {
            if (rs.getTimestamp(2) != null) sentAt.putIfAbsent(rs.getInt(1), rs.getTimestamp(2).toInstant());
        }, id);
    }
}
