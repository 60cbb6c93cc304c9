package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.serde.Sha256;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** POST /api/v1/jobs: what reaches PostgreSQL and Kafka, every validation error, and the bearer token. */
class JobSubmitTest extends GatewayTestBase {

    @Test
    void submitStoresTheJobAndSendsCompileRequestedWithTheRequestsTrace() throws Exception {
        HttpResponse<String> r = submit(new Form().file("model", "mnist.onnx", ONNX)
                .field("target", "c  -mcpu=x86-64-v3").field("opt_level", "2").field("shapes", "Input3=1x1x28x28"));
        assertEquals(201, r.statusCode(), r.body());
        UUID id = UUID.fromString(body(r).get("id").asText());
        assertEquals("QUEUED", body(r).get("status").asText());
        assertEquals(uri("/api/v1/jobs/" + id).toString(), r.headers().firstValue("Location").orElseThrow());

        Map<String, Object> row = jobRow(id);
        assertEquals("QUEUED", row.get("status"));
        assertEquals("mnist.onnx", row.get("model_name"));
        assertEquals("onnx", row.get("model_format"));
        assertEquals("c -mcpu=x86-64-v3", row.get("target"), "stored in the target's canonical form");
        assertEquals(2, row.get("opt_level"));
        assertEquals("Input3=1x1x28x28", row.get("shapes"));
        assertEquals(Sha256.hex(ONNX), row.get("model_sha256"));
        byte[] stored = jdbc.queryForObject("SELECT bytes FROM blobs WHERE sha256 = ?", byte[].class, Sha256.hex(ONNX));
        assertEquals(List.of(ONNX.length), List.of(stored.length));
        assertEquals(List.of("QUEUED/QUEUED"), jdbc.queryForList(
                "SELECT kind || '/' || status FROM job_events WHERE job_id = ? AND stage IS NULL", String.class, id));

        ConsumerRecord<String, String> record = compileRequested(id);
        JsonNode env = json.readTree(record.value());
        assertEquals(id.toString(), env.get("jobId").asText());
        assertEquals("gateway", env.get("stage").asText());
        assertEquals(1, env.get("attempt").asInt());
        assertEquals(1, env.get("schemaVersion").asInt());
        assertTrue(env.get("irRef").isNull(), "no IR before import");
        Instant.parse(env.get("producedAt").asText());
        JsonNode model = env.get("payload").get("model");
        assertEquals(Sha256.hex(ONNX), model.get("sha256").asText());
        assertEquals("mnist.onnx", model.get("name").asText());
        assertEquals("onnx", model.get("format").asText());
        JsonNode options = env.get("payload").get("options");
        assertEquals("c -mcpu=x86-64-v3", options.get("target").asText());
        assertEquals(2, options.get("optLevel").asInt());
        assertEquals("Input3=1x1x28x28", options.get("shapes").asText());

        // The traceparent (envelope and header agree) is the HTTP request's SERVER span, and the job row has its trace.
        String traceparent = env.get("traceparent").asText();
        assertEquals(traceparent, new String(record.headers().lastHeader("traceparent").value(), StandardCharsets.UTF_8));
        String[] parts = traceparent.split("-");
        assertEquals(4, parts.length, traceparent);
        SpanData span = SPANS.getFinishedSpanItems().stream()
                .filter(s -> s.getSpanContext().getSpanId().equals(parts[2])).findFirst()
                .orElseThrow(() -> new AssertionError("no finished span " + parts[2] + " in " + SPANS.getFinishedSpanItems()));
        assertEquals(SpanKind.SERVER, span.getKind());
        assertEquals("POST /api/v1/jobs", span.getName());
        assertEquals(parts[1], span.getTraceId());
        assertEquals(id.toString(), span.getAttributes().get(GatewayTracing.JOB_ID));
        assertEquals(parts[1], row.get("trace_id"));
    }

    @Test
    void aClientsTraceparentBecomesTheJobsTrace() throws Exception {
        String clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
        Form form = new Form().file("model", "net.relay", RELAY.getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> r = send(authed("/api/v1/jobs").header("Content-Type", "multipart/form-data; boundary=" + form.boundary)
                .header("traceparent", "00-" + clientTrace + "-00f067aa0ba902b7-01")
                .POST(HttpRequest.BodyPublishers.ofByteArray(form.bytes())).build());
        assertEquals(201, r.statusCode(), r.body());
        UUID id = UUID.fromString(body(r).get("id").asText());
        assertEquals(clientTrace, jobRow(id).get("trace_id"));
        assertTrue(json.readTree(compileRequested(id).value()).get("traceparent").asText().startsWith("00-" + clientTrace + "-"));
    }

    @Test
    void defaultsAndFormatDetection() throws Exception {
        // No extension: Relay text by content; defaults for target and opt_level; no shapes.
        UUID relay = UUID.fromString(body(submit(new Form().file("model", "upload", RELAY.getBytes(StandardCharsets.UTF_8)))).get("id").asText());
        Map<String, Object> row = jobRow(relay);
        assertEquals("relay", row.get("model_format"));
        assertEquals("c -mcpu=native", row.get("target"));
        assertEquals(3, row.get("opt_level"));
        // The message validates against the contract's schemas (schemas/messages).
        JsonNode message = json.readTree(compileRequested(relay).value());
        assertEquals(List.of(), MessageSchemas.errors("envelope", message));
        assertEquals(List.of(), MessageSchemas.errors("compile.requested", message.get("payload")));
        assertEquals("", row.get("shapes"));
        JsonNode options = json.readTree(compileRequested(relay).value()).get("payload").get("options");
        assertEquals("c -mcpu=native", options.get("target").asText());
        assertEquals(3, options.get("optLevel").asInt());
        assertEquals("", options.get("shapes").asText());
        assertEquals("float", options.get("quantize").asText(), "no quantize field: float");
        assertEquals("float", row.get("quantize"));

        // ONNX by its first byte, and an explicit format overriding the name.
        UUID onnx = UUID.fromString(body(submit(new Form().file("model", "blob.bin", ONNX))).get("id").asText());
        assertEquals("onnx", jobRow(onnx).get("model_format"));
        UUID forced = UUID.fromString(body(submit(new Form().file("model", "model.txt", ONNX).field("format", "onnx"))).get("id").asText());
        assertEquals("onnx", jobRow(forced).get("model_format"));
        // A malformed .onnx is accepted: the import stage reports what is wrong with it.
        HttpResponse<String> garbage = submit(new Form().file("model", "broken.onnx", "not a model".getBytes(StandardCharsets.UTF_8)));
        assertEquals(201, garbage.statusCode(), garbage.body());
    }

    @Test
    void validationErrorsAreProblemsNamingTheField() {
        byte[] relay = RELAY.getBytes(StandardCharsets.UTF_8);
        assertProblem(submit(new Form().field("target", "c")), 400, "'model'");
        assertProblem(submit(new Form().file("model", "m.onnx", new byte[0])), 400, "empty");
        assertProblem(submit(new Form().file("model", "m.relay", relay).field("opt_level", "4")), 400, "opt_level must be an integer in 1..3, got '4'");
        assertProblem(submit(new Form().file("model", "m.relay", relay).field("opt_level", "high")), 400, "got 'high'");
        assertProblem(submit(new Form().file("model", "m.relay", relay).field("opt_level", "0")), 400, "opt_level");
        JsonNode p = assertProblem(submit(new Form().file("model", "m.relay", relay).field("target", "cuda -arch=sm_90")), 400, "unknown target kind 'cuda'");
        assertEquals("/api/v1/docs#problem-bad-target", p.get("type").asText());
        assertProblem(submit(new Form().file("model", "m.relay", relay).field("target", "c -mcpu=pentium9")), 400, "pentium9");
        assertProblem(submit(new Form().file("model", "m.relay", relay).field("shapes", "x=1xax3")), 400, "shapes: entry 'x=1xax3' is malformed");
        assertProblem(submit(new Form().file("model", "m.relay", relay).field("shapes", "x=1x3,x=2")), 400, "names input 'x' a second time");
        assertProblem(submit(new Form().file("model", "m.relay", relay).field("shapes", "x=1x0")), 400, "below 1");
        assertProblem(submit(new Form().file("model", "m.relay", relay).field("shapes", "1x3")), 400, "'1x3' is malformed");
        assertProblem(submit(new Form().file("model", "m.relay", relay).field("format", "tflite")), 400, "format must be 'onnx' or 'relay', got 'tflite'");
        assertProblem(submit(new Form().file("model", "weights.bin", new byte[] {0x7f, 0x00, 0x01})), 400, "cannot tell the format of model 'weights.bin'");
        // Not multipart at all.
        assertProblem(send(authed("/api/v1/jobs").header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")).build()),
                415, "application/json");
        int before = jdbc.queryForObject("SELECT count(*) FROM jobs WHERE model_name IN ('m.relay', 'm.onnx', 'weights.bin')", Integer.class);
        assertEquals(0, before, "no rejected submit leaves a job behind");
    }

    /** A field the compiler library rejects carries the library's diagnostic code in the problem body. */
    @Test
    void rejectedCompileFieldsCarryTheirDiagnosticCode() {
        byte[] relay = RELAY.getBytes(StandardCharsets.UTF_8);
        assertEquals("invalid-shapes", assertProblem(submit(new Form().file("model", "m.relay", relay).field("shapes", "x=1x0")), 400, "below 1").path("code").asText());
        assertEquals("invalid-target", assertProblem(submit(new Form().file("model", "m.relay", relay).field("target", "cuda")), 400, "target: ").path("code").asText());
        assertEquals("invalid-opt-level", assertProblem(submit(new Form().file("model", "m.relay", relay).field("opt_level", "0")), 400, "opt_level").path("code").asText());
        assertEquals("invalid-tune", assertProblem(submit(new Form().file("model", "m.relay", relay).field("tune", "budget=forever")), 400, "tune: ").path("code").asText());
        assertEquals("invalid-quantize", assertProblem(submit(new Form().file("model", "m.relay", relay).field("quantize", "int4")), 400,
                "quantize: expected float or int8, got 'int4'").path("code").asText());
        assertEquals("unknown-format", assertProblem(submit(new Form().file("model", "m.relay", relay).field("format", "tflite")), 400, "format").path("code").asText());
        assertEquals("unknown-format", assertProblem(submit(new Form().file("model", "weights.bin", new byte[] {0x7f, 0x00})), 400, "cannot tell").path("code").asText());
        assertFalse(assertProblem(submit(new Form().file("model", "m.onnx", new byte[0])), 400, "empty").has("code"), "no code where the library was not asked");
    }

    @Test
    void uploadsAboveTheLimitAre413() {
        byte[] big = new byte[100 * 1024];  // the tests run with max-upload-size=64KB
        big[0] = 0x08;
        assertProblem(submit(new Form().file("model", "big.onnx", big)), 413, "65536 bytes");
    }

    @Test
    void theApiNeedsTheBearerToken() {
        Form form = new Form().file("model", "m.relay", RELAY.getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> none = send(HttpRequest.newBuilder(uri("/api/v1/jobs")).header("Content-Type", "multipart/form-data; boundary=" + form.boundary)
                .POST(HttpRequest.BodyPublishers.ofByteArray(form.bytes())).build());
        assertProblem(none, 401, "missing Authorization header");
        assertEquals("Bearer realm=\"relayfarm\"", none.headers().firstValue("WWW-Authenticate").orElse(""));
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/jobs")).header("Authorization", "Bearer wrong").GET().build()), 401, "not valid");
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/jobs")).header("Authorization", "Basic dXNlcjpwdw==").GET().build()), 401, "not a Bearer token");
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/jobs/" + UUID.randomUUID() + "/artifact")).GET().build()), 401, "missing");
        // Encoded or dotted paths that Spring MVC routes to a protected handler are protected too.
        assertProblem(send(HttpRequest.newBuilder(uri("/%61pi/v1/jobs")).GET().build()), 401, "missing");
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/docs/..;/jobs")).GET().build()), 401, "missing");
        // Unknown paths under /api/v1 are also behind the token (no probing without it).
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/nothing")).GET().build()), 401, "missing");
        assertEquals(200, send(HttpRequest.newBuilder(uri("/api/v1/openapi.json")).GET().build()).statusCode());
        assertEquals(200, send(HttpRequest.newBuilder(uri("/api/v1/docs")).GET().build()).statusCode());
    }

    @Test
    void unknownPathsAndMethodsAreProblemsToo() {
        assertProblem(get("/api/v1/nothing"), 404, "nothing");
        assertProblem(send(authed("/api/v1/jobs/" + UUID.randomUUID()).DELETE().build()), 405, "DELETE");
    }

    /** The compile.requested record of one job (the topic holds every test's jobs). */
    private ConsumerRecord<String, String> compileRequested(UUID id) {
        List<ConsumerRecord<String, String>> records = records("compile.requested", id, 1);
        assertEquals(1, records.size(), "one compile.requested per job");
        return records.getFirst();
    }
}
