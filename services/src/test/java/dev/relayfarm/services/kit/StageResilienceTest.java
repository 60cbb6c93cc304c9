package dev.relayfarm.services.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.services.FarmTestInfra;
import dev.relayfarm.services.RelayFarmServices;
import dev.relayfarm.services.TestJobs;
import dev.relayfarm.services.TopicReader;
import dev.relayfarm.services.store.JobRow;
import dev.relayfarm.services.store.JobStatus;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.NewJob;
import dev.relayfarm.services.store.PgBlobStore;
import io.opentelemetry.api.OpenTelemetry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The kit against handlers that misbehave, over a real Kafka broker and a real PostgreSQL, with the gateway's REST API
 * in the same context. The importer here is a test handler whose behaviour the model's name picks: overflow the
 * stack, run out of memory, block until interrupted, or succeed. It has a broker of its own, so no other test
 * context's importer (same consumer group) takes its messages.
 */
@SpringBootTest(classes = {RelayFarmServices.class, StageResilienceTest.Handlers.class}, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"relayfarm.roles=gateway", "relayfarm.token=" + StageResilienceTest.TOKEN, "relayfarm.gateway.requeue-check=0s",
                "relayfarm.retention.sweep-interval=0s",
                "relayfarm.stage.max-attempts=3", "relayfarm.stage.backoff=50ms", "relayfarm.stage.shutdown-timeout=1s",
                "relayfarm.stage.cancel-poll=200ms", "relayfarm.stage.cancel-grace=2s", "relayfarm.stage.watchdog-interval=300ms",
                "spring.kafka.consumer.properties.interceptor.classes=dev.relayfarm.services.kit.StageResilienceTest$KillingInterceptor"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StageResilienceTest {
    static final String TOKEN = "resilience-token";
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final EmbeddedKafkaKraftBroker KAFKA = broker();

    private static EmbeddedKafkaKraftBroker broker() {
        EmbeddedKafkaKraftBroker b = new EmbeddedKafkaKraftBroker(1, 1);
        b.afterPropertiesSet();
        Runtime.getRuntime().addShutdownHook(new Thread(b::destroy));
        return b;
    }

    @DynamicPropertySource
    static void infra(DynamicPropertyRegistry r) {
        FarmTestInfra.register(r);
        r.add("spring.kafka.bootstrap-servers", KAFKA::getBrokersAsString);
    }

    /** What the test importer saw of one job. */
    static final class Seen {
        final AtomicInteger runs = new AtomicInteger();
        volatile int lastAttempt;
        volatile long startedNanos;
        volatile long interruptedNanos;
        volatile int depth;
    }

    static final Map<UUID, Seen> SEEN = new ConcurrentHashMap<>();
    static volatile StageRunners RUNNERS;

    static Seen seen(UUID id) {
        return SEEN.computeIfAbsent(id, k -> new Seen());
    }

    /** Kills the consumer thread (an Error out of poll: Kafka's interceptor chain only catches Exceptions) once per listed job. */
    public static final class KillingInterceptor implements ConsumerInterceptor<String, String> {
        static final Set<String> KILL = ConcurrentHashMap.newKeySet();

        @Override
        public ConsumerRecords<String, String> onConsume(ConsumerRecords<String, String> records) {
            for (ConsumerRecord<String, String> r : records) {
                if (r.key() != null && KILL.remove(r.key())) throw new OutOfMemoryError("killed by the test on " + r.key());
            }
            return records;
        }

        @Override
        public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {}

        @Override
        public void close() {}

        @Override
        public void configure(Map<String, ?> configs) {}
    }

    @TestConfiguration
    static class Handlers {
        @Bean
        StageHandler testImporter(PgBlobStore blobs) {
            return new StageHandler() {
                @Override
                public Stage stage() {
                    return Stage.IMPORTER;
                }

                @Override
                public StageOutput run(StageInput in) throws Exception {
                    Seen s = seen(in.job().id());
                    s.runs.incrementAndGet();
                    s.lastAttempt = in.attempt();
                    s.startedNanos = System.nanoTime();
                    switch (in.job().modelName()) {
                        case "overflow.relay" -> recurse(s);
                        case "oom.relay" -> throw new OutOfMemoryError("Java heap space");
                        case "throw-on-stop.relay" -> {
                            if (s.runs.get() == 1) {
                                // as a compile whose gcc the JVM's shutdown hook killed on SIGTERM, while the loop stops
                                while (!RUNNERS.stopRequested()) Thread.sleep(10);
                                throw new RuntimeException("gcc was killed (signal 15)");
                            }
                        }
                        case "block.relay" -> {
                            try {
                                Thread.sleep(Duration.ofMinutes(5));
                            } catch (InterruptedException e) {
                                s.interruptedNanos = System.nanoTime();
                                throw e;
                            }
                        }
                        default -> { }
                    }
                    return StageOutput.of(in.job().modelSha256(), in.forwardPayload());
                }
            };
        }

        private static void recurse(Seen s) {
            s.depth++;
            recurse(s);
        }
    }

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;
    @Autowired PgBlobStore blobs;
    @Autowired JobStore jobs;
    @Autowired KafkaTemplate<String, String> kafka;
    @Autowired OpenTelemetry otel;
    @Autowired StageRunners runners;
    TestJobs submit;
    final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    void setUp() {
        submit = new TestJobs(blobs, jobs, kafka, otel);
        RUNNERS = runners;
    }

    private UUID job(String name) throws Exception {
        return submit.submit(name, "relay", ("-- " + name + " " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8), "c", 3, "").id();
    }

    /** The next job gets through the importer: the consumer is alive and past every earlier message. */
    private void importerStillWorks() throws Exception {
        UUID ok = job("ok.relay");
        TestJobs.await(() -> jobs.stageOutput(ok, "import").isPresent(), TIMEOUT, "a later job imported");
    }

    private List<ConsumerRecord<String, String>> dlq(UUID id) {
        return TopicReader.readAll(KAFKA.getBrokersAsString(), Stage.IMPORTER.dlqTopic()).stream().filter(r -> id.toString().equals(r.key())).toList();
    }

    @Test
    void aStackOverflowFailsItsJobInWordsAndTheStageGoesOn() throws Exception {
        UUID id = job("overflow.relay");
        assertEquals(JobStatus.FAILED, submit.awaitTerminal(id, TIMEOUT));
        JobRow row = jobs.find(id).orElseThrow();
        assertEquals("import", row.errorStage());
        assertEquals("internal error in import: StackOverflowError \u2014 the model is nested too deeply or too large", row.errorMessage());
        assertEquals(1, seen(id).runs.get(), "an Error is not retried");
        // the handler ran on a large stack: a default 1 MB thread stack overflows after some 10^4 of these frames
        assertTrue(seen(id).depth > 500_000, "recursion depth " + seen(id).depth);
        TestJobs.await(() -> !dlq(id).isEmpty(), TIMEOUT, "the record dead-lettered");
        assertEquals(row.errorMessage(), new String(dlq(id).getFirst().headers().lastHeader("relayfarm.error").value(), StandardCharsets.UTF_8));
        importerStillWorks();
    }

    @Test
    void anOutOfMemoryErrorFailsItsJobInWords() throws Exception {
        UUID id = job("oom.relay");
        assertEquals(JobStatus.FAILED, submit.awaitTerminal(id, TIMEOUT));
        assertEquals("internal error in import: OutOfMemoryError \u2014 the importer service ran out of memory (Java heap space); the model is too large"
                + " for it, or it needs a larger heap (-Xmx)", jobs.find(id).orElseThrow().errorMessage());
        importerStillWorks();
    }

    @Test
    void cancellingAJobInterruptsItsRunningHandler() throws Exception {
        UUID id = job("block.relay");
        TestJobs.await(() -> seen(id).runs.get() == 1, TIMEOUT, "the handler to start");
        long cancelled = System.nanoTime();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1/jobs/" + id + "/cancel"))
                .header("Authorization", "Bearer " + TOKEN).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        // cancel-poll is 200 ms here; generous bounds for a loaded 2-core CI machine
        TestJobs.await(() -> seen(id).interruptedNanos != 0, Duration.ofSeconds(10), "the handler to be interrupted");
        assertTrue(seen(id).interruptedNanos - cancelled < Duration.ofSeconds(10).toNanos());
        importerStillWorks();
        assertEquals(JobStatus.CANCELLED, jobs.status(id).orElseThrow());
        assertEquals(1, seen(id).runs.get(), "the message was committed, not redelivered");
        assertTrue(jobs.stageOutput(id, "import").isEmpty());
    }

    @Test
    void stoppingInterruptsPromptlyAndLeavesTheMessageForRedelivery() throws Exception {
        UUID id = job("block.relay");
        TestJobs.await(() -> seen(id).runs.get() == 1, TIMEOUT, "the handler to start");
        long t0 = System.nanoTime();
        runners.stop();
        long stopMs = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(seen(id).interruptedNanos != 0, "the handler was interrupted");
        // shutdown-timeout is 1 s here (default 10 s), then the interrupted handler ends at once (bound: 1 s + cancel-grace
        // 2 s + 2 s, plus slack for a loaded CI machine)
        assertTrue(stopMs < 10_000, "stop took " + stopMs + " ms");
        runners.start();
        TestJobs.await(() -> seen(id).runs.get() == 2, TIMEOUT, "the uncommitted message to be redelivered");
        assertEquals(1, seen(id).lastAttempt, "an attempt the shutdown interrupted is not counted");
        jdbc.update("UPDATE jobs SET status = 'CANCELLED' WHERE id = ?", id);
        importerStillWorks();
    }

    @Test
    void aHandlerThatThrowsWhileTheServiceStopsIsAStopNotAFailedAttempt() throws Exception {
        UUID id = job("throw-on-stop.relay");
        TestJobs.await(() -> seen(id).runs.get() == 1, TIMEOUT, "the handler to start");
        runners.stop();
        assertEquals(0, attempts(id), "the attempt that threw during the stop was taken back");
        assertEquals(JobStatus.IMPORTING, jobs.status(id).orElseThrow());
        assertEquals(0, jdbc.queryForObject("SELECT count(*) FROM job_events WHERE job_id = ? AND kind IN ('RETRY', 'FAILED')", Integer.class, id),
                "no RETRY or FAILED event");
        runners.start();
        TestJobs.await(() -> jobs.stageOutput(id, "import").isPresent(), TIMEOUT, "the uncommitted message redelivered and imported");
        assertEquals(2, seen(id).runs.get());
        assertEquals(1, seen(id).lastAttempt, "the redelivery is attempt 1 again");
        assertEquals(0, attempts(id), "an attempt whose handler returned is taken back");
    }

    private int attempts(UUID id) {
        return jdbc.queryForList("SELECT attempts FROM stage_attempts WHERE job_id = ? AND stage = 'import'", Integer.class, id).stream().findFirst().orElse(0);
    }

    @Test
    void aMessageWhoseAttemptsAllDiedGoesToTheDlqInsteadOfRunningAgain() throws Exception {
        // as after three deliveries that each took the importer's process down mid-handler (the counter is in PostgreSQL)
        String sha = blobs.put(("poison " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
        UUID id = UUID.randomUUID();
        jobs.create(new NewJob(id, "ok.relay", "relay", sha, "c", 3, "", null, null, 0));
        jdbc.update("INSERT INTO stage_attempts (job_id, stage, attempts) VALUES (?, 'import', 3)", id);
        submit.send(Stage.IMPORTER.inputTopic, Envelopes.compileRequested(id, sha, "ok.relay", "relay", "c", 3, "", null));
        assertEquals(JobStatus.FAILED, submit.awaitTerminal(id, TIMEOUT));
        String message = jobs.find(id).orElseThrow().errorMessage();
        assertTrue(message.startsWith("import was started 3 times on this job without finishing (the importer service stopped or died during each attempt)"),
                message);
        assertEquals(0, seen(id).runs.get(), "the handler did not run a fourth time");
        TestJobs.await(() -> !dlq(id).isEmpty(), TIMEOUT, "the record dead-lettered");
        assertEquals("3", new String(dlq(id).getFirst().headers().lastHeader("relayfarm.attempts").value(), StandardCharsets.UTF_8));
        importerStillWorks();
    }

    @Test
    void aDeadConsumerThreadIsRestartedAndShownInHealth() throws Exception {
        UUID id = UUID.randomUUID();
        KillingInterceptor.KILL.add(id.toString());
        String sha = blobs.put(("kill " + id).getBytes(StandardCharsets.UTF_8));
        jobs.create(new NewJob(id, "ok.relay", "relay", sha, "c", 3, "", null, null, 0));
        int restartsBefore = runners.health().getFirst().restarts();
        submit.send(Stage.IMPORTER.inputTopic, Envelopes.compileRequested(id, sha, "ok.relay", "relay", "c", 3, "", null));
        // the thread died in poll; the watchdog's fresh consumer reads the uncommitted record again
        TestJobs.await(() -> jobs.stageOutput(id, "import").isPresent(), TIMEOUT, "the job imported after the restart");
        StageRunners.ConsumerHealth h = runners.health().getFirst();
        assertEquals(restartsBefore + 1, h.restarts());
        assertTrue(h.alive());
        assertTrue(h.lastError().contains("killed by the test on " + id), h.lastError());

        TestJobs.await(() -> importHealth().path("consumers").findValues("restarts").stream().anyMatch(n -> n.asInt() == restartsBefore + 1),
                TIMEOUT, "the restart in /api/v1/health");
        assertEquals("UP", importHealth().path("status").asText(), importHealth().toString());
        // a dead consumer thread (as a process whose watchdog could not restart it would report): the stage is degraded
        String dead = "test-dead-" + UUID.randomUUID();
        jdbc.update("INSERT INTO stage_consumers (id, stage, alive, restarts, last_error) VALUES (?, 'import', false, 3, 'OutOfMemoryError')", dead);
        try {
            JsonNode import_ = importHealth();
            assertEquals("DEGRADED", import_.path("status").asText(), import_.toString());
            // other test contexts in this JVM report to the same database: count only on the dead one
            assertTrue(import_.path("reason").asText().matches("1 of \\d+ importer consumer threads are dead"), import_.toString());
            // without a (valid) token: the statuses and reasons, but no job ids, errors or restarts
            for (String auth : new String[] {null, "Bearer wrong-token"}) {
                HttpResponse<String> p = publicHealth(auth);
                JsonNode pub = Envelopes.MAPPER.readTree(p.body()).path("stages").path("import");
                assertEquals("DEGRADED", pub.path("status").asText(), p.body());
                assertTrue(pub.path("consumers").isMissingNode(), p.body());
                assertTrue(!p.body().contains("OutOfMemoryError") && !p.body().contains("busyJob") && !p.body().contains("restarts"), p.body());
            }
            HttpResponse<String> r = health();
            JsonNode body = Envelopes.MAPPER.readTree(r.body());
            assertTrue(Set.of("DEGRADED", "DOWN").contains(body.path("status").asText()), r.body());
            assertEquals(body.path("status").asText().equals("DOWN") ? 503 : 200, r.statusCode());
            if (body.path("stages").path("infer").path("consumers").isEmpty()) {
                // no type-inference runs in this context (nor, then, in another one): jobs cannot get past import
                assertEquals("no type-inference consumer reported in the last 5 s: is the type-inference service running?",
                        body.path("stages").path("infer").path("reason").asText());
            }
        } finally {
            jdbc.update("DELETE FROM stage_consumers WHERE id = ?", dead);
        }
    }

    /** The health endpoint with the token: the consumers' details. */
    private HttpResponse<String> health() throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1/health")).header("Authorization", "Bearer " + TOKEN).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The health endpoint as anyone sees it (public: no token), or with a wrong token. */
    private HttpResponse<String> publicHealth(String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1/health")).GET();
        if (authorization != null) b.header("Authorization", authorization);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode importHealth() {
        try {
            JsonNode n = Envelopes.MAPPER.readTree(health().body()).path("stages").path("import");
            assertNotNull(n);
            return n;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
