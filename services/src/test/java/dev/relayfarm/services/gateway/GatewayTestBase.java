package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The gateway on a real port over real PostgreSQL and Kafka ({@link FarmTestInfra}), only the gateway role, with an
 * in-memory span exporter. Every test class extends this unchanged, so Spring starts the context once.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "relayfarm.roles=gateway",
        "relayfarm.token=" + GatewayTestBase.TOKEN,
        "relayfarm.tokens=" + GatewayTestBase.TOKENS,
        "relayfarm.gateway.max-upload-size=64KB",
        "relayfarm.gateway.event-poll=50ms",
        // QueuedJobsResender runs when a test calls it: a timer would re-send other tests' QUEUED jobs
        "relayfarm.gateway.requeue-check=0s",
        // no importer runs here, so every test's jobs stay QUEUED: a per-token job quota would soon refuse submits
        "relayfarm.gateway.quota.max-active-jobs=1000000",
        "relayfarm.retention.sweep-interval=0s"})
@Import(GatewayTestBase.Tracing.class)
abstract class GatewayTestBase {
    static final String TOKEN = "test-token-4f1c";
    /** One token per role (relayfarm.tokens): the admin TOKEN has them all. */
    static final String SUBMITTER = "sub-token-7a21", REVIEWER = "rev-token-93be", OPERATOR = "op-token-c40d", AGENT = "agent-token-5e6f";
    static final String TOKENS = "sam:submitter:" + SUBMITTER + ", rita:reviewer:" + REVIEWER + ", otto:operator:" + OPERATOR + ",ada:agent:" + AGENT;
    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();

    @DynamicPropertySource
    static void infra(DynamicPropertyRegistry registry) {
        FarmTestInfra.register(registry);
    }

    @TestConfiguration
    static class Tracing {
        /** Primary: the service kit defines its own SDK bean; the test's records spans in memory. */
        @Bean
        @Primary
        OpenTelemetry openTelemetry() {
            return OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(SPANS)).build())
                    .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
        }
    }

    @LocalServerPort
    int port;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    ObjectMapper json;

    final HttpClient http = HttpClient.newHttpClient();

    /** A small but real ONNX ModelProto prefix (ir_version = 8): the gateway only sniffs the first byte. */
    static final byte[] ONNX = {0x08, 0x08, 0x12, 0x04, 't', 'e', 's', 't'};
    static final String RELAY = "def @main(%x: Tensor[(1, 4), float32]) { nn.relu(%x) }\n";

    URI uri(String path) {
        return URI.create("http://localhost:" + port + path);
    }

    HttpRequest.Builder authed(String path) {
        return HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + TOKEN);
    }

    /** A request with {@code token} as its bearer token. */
    HttpRequest.Builder as(String token, String path) {
        return HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + token);
    }

    /** POSTs {@code jsonBody} (null: no body) with {@code token}. */
    HttpResponse<String> postJson(String token, String path, String jsonBody) {
        return send(as(token, path).header("Content-Type", "application/json")
                .POST(jsonBody == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(jsonBody)).build());
    }

    HttpResponse<String> get(String path) {
        return send(authed(path).GET().build());
    }

    HttpResponse<String> post(String path) {
        return send(authed(path).POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    HttpResponse<String> send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    JsonNode body(HttpResponse<String> r) {
        try {
            return json.readTree(r.body());
        } catch (IOException e) {
            throw new AssertionError("not JSON (" + r.statusCode() + "): " + r.body(), e);
        }
    }

    /** A multipart form: a file part {@code model} (when {@code fileName} is not null) and plain fields. */
    static final class Form {
        final String boundary = "----relayfarm" + UUID.randomUUID();
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Form file(String part, String fileName, byte[] content) {
            write("--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + part + "\"; filename=\"" + fileName
                    + "\"\r\nContent-Type: application/octet-stream\r\n\r\n");
            out.writeBytes(content);
            write("\r\n");
            return this;
        }

        Form field(String name, String value) {
            write("--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n");
            return this;
        }

        byte[] bytes() {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            all.writeBytes(out.toByteArray());
            all.writeBytes(("--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
            return all.toByteArray();
        }

        private void write(String s) {
            out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        }
    }

    HttpResponse<String> submit(Form form) {
        return send(authed("/api/v1/jobs").header("Content-Type", "multipart/form-data; boundary=" + form.boundary)
                .POST(HttpRequest.BodyPublishers.ofByteArray(form.bytes())).build());
    }

    /** Submits a Relay model and returns the new job's id (asserting the 201). */
    UUID submitRelay(String name) {
        HttpResponse<String> r = submit(new Form().file("model", name, RELAY.getBytes(StandardCharsets.UTF_8)));
        if (r.statusCode() != 201) throw new AssertionError("submit: " + r.statusCode() + " " + r.body());
        return UUID.fromString(body(r).get("id").asText());
    }

    /** Checks an error response: status, problem+json, and a detail containing {@code detailPart}. */
    JsonNode assertProblem(HttpResponse<String> r, int status, String detailPart) {
        org.junit.jupiter.api.Assertions.assertEquals(status, r.statusCode(), r.body());
        org.junit.jupiter.api.Assertions.assertEquals("application/problem+json",
                r.headers().firstValue("Content-Type").orElse("").split(";")[0], "content type of " + r.body());
        JsonNode p = body(r);
        org.junit.jupiter.api.Assertions.assertEquals(status, p.get("status").asInt(), r.body());
        org.junit.jupiter.api.Assertions.assertTrue(p.hasNonNull("title") && p.hasNonNull("type"), r.body());
        org.junit.jupiter.api.Assertions.assertTrue(p.path("detail").asText().contains(detailPart),
                "detail should contain '" + detailPart + "': " + r.body());
        return p;
    }

    /**
     * The records of one job on a topic (the topic holds every test's jobs): reads from the start until at least
     * {@code atLeast} records with the job's key arrived (fails after 20 s), then half a second more for extras.
     */
    java.util.List<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>> records(String topic, UUID id, int atLeast) {
        java.util.Properties p = new java.util.Properties();
        p.put(org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, FarmTestInfra.brokers());
        p.put(org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_ID_CONFIG, "gateway-test-" + UUID.randomUUID());
        p.put(org.apache.kafka.clients.consumer.ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        var out = new java.util.ArrayList<org.apache.kafka.clients.consumer.ConsumerRecord<String, String>>();
        var strings = new org.apache.kafka.common.serialization.StringDeserializer();
        try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<>(p, strings, strings)) {
            consumer.subscribe(java.util.List.of(topic));
            long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
            long settle = Long.MAX_VALUE;
            while (System.nanoTime() < Math.min(deadline, settle)) {
                for (var rec : consumer.poll(java.time.Duration.ofMillis(100))) {
                    if (rec.key().equals(id.toString())) out.add(rec);
                }
                if (out.size() >= atLeast && settle == Long.MAX_VALUE) settle = System.nanoTime() + 500_000_000L;
            }
        }
        if (out.size() < atLeast) throw new AssertionError(out.size() + " records with key " + id + " on " + topic + ", expected at least " + atLeast);
        return out;
    }

    Map<String, Object> jobRow(UUID id) {
        return new LinkedHashMap<>(jdbc.queryForMap("SELECT * FROM jobs WHERE id = ?", id));
    }
}
