package dev.relayfarm.services.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

/** The envelope's JSON form and the kit's backoff arithmetic, without a broker. */
class EnvelopesTest {
    @Test
    void roundTripsAndRejectsWhatItCannotRead() {
        var payload = new JobPayload(new JobModel("b".repeat(64), "m.relay", "relay"), new JobOptions("c", 3, ""));
        Envelope e = new Envelope(UUID.randomUUID(), "import", 2, Envelope.SCHEMA_VERSION, "a".repeat(64), payload,
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Instant.parse("2026-11-21T12:00:00.123Z"));
        String json = Envelopes.write(e);
        assertTrue(json.contains("\"producedAt\":\"2026-11-21T12:00:00.123Z\""), json);
        assertEquals(e, Envelopes.read(json));
        var unknown = assertThrows(IllegalArgumentException.class, () -> Envelopes.read(json.replace("{\"jobId\"", "{\"jobID\":1,\"jobId\"")));
        assertTrue(unknown.getMessage().contains("jobID"), unknown.getMessage());
        var version = assertThrows(IllegalArgumentException.class, () -> Envelopes.read(json.replace("\"schemaVersion\":1", "\"schemaVersion\":2")));
        // the dead letter's relayfarm.error header carries these words as they were before the payload records
        assertEquals("envelope schemaVersion 2 is not supported (this service reads 1)", version.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Envelopes.read("{not json"));
        assertThrows(IllegalArgumentException.class, () -> Envelopes.read(json.replace("\"attempt\":2", "\"attempt\":0")));
    }

    @Test
    void backoffDoublesUpToTheMaximum() {
        StageSettings s = new StageSettings(5, Duration.ofMillis(100), Duration.ofMillis(500), 1, Duration.ofMillis(100), Duration.ofSeconds(1),
                Duration.ofMinutes(1), DataSize.ofMegabytes(256), Duration.ofMillis(500), Duration.ofSeconds(5), Duration.ofSeconds(2));
        assertEquals(Duration.ofMillis(100), s.backoffAfter(1));
        assertEquals(Duration.ofMillis(200), s.backoffAfter(2));
        assertEquals(Duration.ofMillis(400), s.backoffAfter(3));
        assertEquals(Duration.ofMillis(500), s.backoffAfter(4));
        assertEquals(Duration.ofMillis(500), s.backoffAfter(60));
        assertThrows(IllegalArgumentException.class, () -> new StageSettings(0, Duration.ZERO, Duration.ZERO, 1, Duration.ZERO, Duration.ZERO, Duration.ZERO,
                DataSize.ofMegabytes(256), Duration.ZERO, Duration.ZERO, Duration.ZERO));
    }

    @Test
    void everyTopicIsDeclared() {
        var names = Stage.topicNames();
        for (Stage s : Stage.values()) {
            assertTrue(names.contains(s.inputTopic) && names.contains(s.outputTopic) && names.contains(s.dlqTopic()), s.toString());
        }
        assertTrue(names.contains(Stage.JOB_EVENTS_TOPIC));
        assertEquals(names.size(), names.stream().distinct().count());
    }
}
