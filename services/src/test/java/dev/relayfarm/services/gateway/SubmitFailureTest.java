package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.serde.Sha256;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.support.SendResult;
import org.springframework.util.unit.DataSize;

/** When Kafka does not take compile.requested: the send reports why, and the recorded job becomes FAILED in the gateway. */
class SubmitFailureTest extends GatewayTestBase {
    @Autowired
    JobRepository jobs;

    @Test
    @SuppressWarnings("unchecked")
    void aRefusedSendNamesTheCauseAndAnUnansweredOneTheTimeout() {
        JobSubmission s = submission();
        var props = new GatewayProperties(DataSize.ofMegabytes(1), Duration.ofMillis(200), Duration.ofMillis(50), Duration.ofMinutes(1), Duration.ofMinutes(1), Duration.ZERO, 4);
        KafkaTemplate<String, String> refusing = mock(KafkaTemplate.class);
        when(refusing.send(any(ProducerRecord.class))).thenReturn(CompletableFuture.failedFuture(new TimeoutException("Topic compile.requested not present in metadata")));
        var requests = new CompileRequests(refusing, props);
        var e = assertThrows(CompileRequests.SendFailed.class, () -> requests.send(requests.envelope(UUID.randomUUID(), s, null)));
        assertEquals("Kafka refused compile.requested: Topic compile.requested not present in metadata", e.getMessage());

        KafkaTemplate<String, String> silent = mock(KafkaTemplate.class);
        when(silent.send(any(ProducerRecord.class))).thenReturn(new CompletableFuture<SendResult<String, String>>());
        var slow = new CompileRequests(silent, props);
        assertEquals("Kafka did not acknowledge compile.requested within PT0.2S",
                assertThrows(CompileRequests.SendFailed.class, () -> slow.send(slow.envelope(UUID.randomUUID(), s, null))).getMessage());
    }

    @Test
    void anUnqueuedJobIsFailedByTheGateway() throws Exception {
        UUID id = UUID.randomUUID();
        jobs.create(id, submission(), null);
        jobs.failUnqueued(id, "Kafka refused compile.requested: broker down");
        JsonNode j = body(get("/api/v1/jobs/" + id));
        assertEquals("FAILED", j.get("status").asText());
        assertEquals("gateway", j.get("error").get("stage").asText());
        assertEquals("Kafka refused compile.requested: broker down", j.get("error").get("message").asText());
        assertEquals(List.of("QUEUED", "FAILED"), jdbc.queryForList("SELECT kind FROM job_events WHERE job_id = ? ORDER BY id", String.class, id));
        for (var rec : records("job.events", id, 2)) {
            assertEquals(List.of(), MessageSchemas.errors("job.events", json.readTree(rec.value())), rec.value());
        }
        // Only a still-QUEUED job: a second call (or one after a cancel) changes nothing.
        jobs.failUnqueued(id, "again");
        assertEquals(2, jdbc.queryForObject("SELECT count(*) FROM job_events WHERE job_id = ?", Integer.class, id));
        assertTrue(j.get("stages").isEmpty(), "the gateway is not a pipeline stage in the timings");
    }

    @Autowired
    QueuedJobsResender resender;

    @Test
    void aJobLeftQueuedIsSentAgainAfterAWhile() throws Exception {
        UUID stale = UUID.randomUUID(), fresh = UUID.randomUUID();
        jobs.create(stale, submission(), null); // recorded, never sent: the gateway stopped before its send
        jobs.create(fresh, submission(), null);
        jdbc.update("UPDATE jobs SET created_at = now() - interval '10 minutes' WHERE id = ?", stale);
        List<UUID> sent = resender.resendStale();
        assertTrue(sent.contains(stale) && !sent.contains(fresh), sent.toString());
        var recs = records("compile.requested", stale, 1);
        assertEquals(1, recs.size());
        JsonNode env = json.readTree(recs.getFirst().value());
        assertEquals(List.of(), MessageSchemas.errors("envelope", env), recs.getFirst().value());
        assertEquals(List.of(), MessageSchemas.errors("compile.requested", env.get("payload")), recs.getFirst().value());
        assertEquals(submission().modelSha256(), env.get("payload").get("model").get("sha256").asText());
        assertEquals("unqueued.relay", env.get("payload").get("model").get("name").asText());
    }

    private static JobSubmission submission() {
        byte[] model = RELAY.getBytes(StandardCharsets.UTF_8);
        return new JobSubmission("unqueued.relay", ModelFormat.RELAY, model, Sha256.hex(model), "c -mcpu=native", 3, "", "apply", "float");
    }
}
