package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.fuzz.FuzzCampaign;
import dev.relayfarm.fuzz.Mutator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fuzzes the gateway's REST API on the real farm (real Kafka, real PostgreSQL, every stage): submissions with
 * real and mutated models (Relay text, ONNX, deep nesting), field values good and bad, broken multipart bodies,
 * other content types, wrong credentials, and path/method tricks. Properties: every answer is a 2xx or a 4xx —
 * never a 5xx, and every 4xx is {@code application/problem+json}; every accepted job ends (SUCCEEDED, FAILED
 * with a stage and a message, or CANCELLED) — none is stuck.
 *
 * <p>CI sends 200 requests; a campaign: {@code ./mvnw -pl e2e-tests -am verify -Dtest=SubmitFuzzTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Drelayfarm.fuzz.inputs=2000}.
 */
@ExtendWith(E2eFarmExtension.class)
class SubmitFuzzTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> TERMINAL = Set.of("SUCCEEDED", "FAILED", "CANCELLED");

    /** One HTTP exchange to make. */
    record Request(String method, String path, Map<String, String> headers, byte[] body, String what) {}

    /** An answer that breaks the property. */
    static final class BadAnswer extends RuntimeException {
        BadAnswer(String message) {
            super(message);
        }
    }

    @Test
    void everyRequestIsAnsweredCleanlyAndEveryAcceptedJobEnds(E2eFarm farm) throws Exception {
        List<Model> models = models();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        List<String> accepted = new CopyOnWriteArrayList<>();
        Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
        String base = farm.farm.gatewayUrl();
        String token = farm.farm.token();

        FuzzCampaign<Request> campaign = new FuzzCampaign<>("rest-submit", rng -> request(rng, models, token),
                r -> exchange(http, base, r, accepted, statuses), t -> false,
                new FuzzCampaign.Saver<>("http", r -> (r.method() + " " + r.path() + "\n" + r.headers() + "\n\n" + new String(r.body(), StandardCharsets.ISO_8859_1))
                        .getBytes(StandardCharsets.ISO_8859_1)));
        FuzzCampaign.Report r = campaign.run(FuzzCampaign.inputs(200));
        System.out.println("fuzz rest-submit: answers by status " + new TreeMap<>(statuses) + ", " + accepted.size() + " jobs accepted");
        assertTrue(r.findings().isEmpty(), () -> r.describeFindings(10));

        // no job is left behind: each accepted job ends, and a failed one says where and why
        Map<String, Integer> ends = new TreeMap<>();
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        for (String id : accepted) {
            JsonNode job;
            while (true) {
                job = farm.client.job(id);
                if (TERMINAL.contains(job.path("status").asText()) || System.nanoTime() > deadline) break;
                Thread.sleep(100);
            }
            String status = job.path("status").asText();
            assertTrue(TERMINAL.contains(status), "job " + id + " is stuck: " + job);
            if (status.equals("FAILED")) {
                assertTrue(!job.path("error").path("message").asText().isBlank() && !job.path("error").path("stage").asText().isBlank(),
                        "a FAILED job names its stage and reason: " + job);
            }
            ends.merge(status, 1, Integer::sum);
        }
        System.out.println("fuzz rest-submit: accepted jobs ended " + ends);
        assertEquals(accepted.size(), ends.values().stream().mapToInt(Integer::intValue).sum());
    }

    /** Sends one request and checks the answer; throws {@link BadAnswer} when the property is broken. */
    static void exchange(HttpClient http, String base, Request r, List<String> accepted, Map<Integer, Integer> statuses) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + r.path())).timeout(Duration.ofSeconds(60))
                .method(r.method(), r.body().length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(r.body()));
        r.headers().forEach(b::header);
        HttpResponse<String> answer = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        int status = answer.statusCode();
        statuses.merge(status, 1, Integer::sum);
        String type = answer.headers().firstValue("Content-Type").orElse("");
        if (status >= 500) throw new BadAnswer(r.what() + ": HTTP " + status + " " + abbreviate(answer.body()));
        if (status >= 400) {
            if (!type.startsWith("application/problem+json")) throw new BadAnswer(r.what() + ": HTTP " + status + " as " + type + ", not problem+json: " + abbreviate(answer.body()));
            JsonNode problem = JSON.readTree(answer.body());
            if (problem.path("status").asInt() != status || problem.path("title").asText().isBlank()) {
                throw new BadAnswer(r.what() + ": problem document without status/title: " + abbreviate(answer.body()));
            }
        } else if (status == 201) {
            String id = JSON.readTree(answer.body()).path("id").asText("");
            if (id.isEmpty()) throw new BadAnswer(r.what() + ": 201 without a job id: " + abbreviate(answer.body()));
            accepted.add(id);
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }

    /** A model to submit: its file name and bytes. */
    record Model(String name, byte[] bytes) {}

    static Request request(Random rng, List<Model> models, String token) {
        Mutator m = new Mutator(rng);
        Map<String, String> headers = new TreeMap<>();
        headers.put("Authorization", "Bearer " + token);
        int kind = rng.nextInt(20);
        if (kind < 9) { // a multipart submission: a real or mutated model, fields good and bad
            Model model = models.get(rng.nextInt(models.size()));
            byte[] bytes = rng.nextInt(3) == 0 ? model.bytes() : m.mutateBytes(model.bytes(), 1 + rng.nextInt(4), List.of());
            if (rng.nextInt(12) == 0) bytes = ("def @main() { " + "(".repeat(100_000) + "1" + ")".repeat(100_000) + " }").getBytes(StandardCharsets.UTF_8);
            String boundary = "fz" + Long.toHexString(rng.nextLong());
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            if (rng.nextInt(4) > 0) part(body, boundary, "target", pick(rng, "c -mcpu=native", "c", "llvm -mcpu=skylake", "cuda", "", "c -mcpu=" + "x".repeat(5000), "c -mattr=+avx2\u0000"));
            if (rng.nextInt(4) > 0) part(body, boundary, "opt_level", pick(rng, "3", "1", "2", "0", "4", "-1", "3.5", "99999999999999999999", "", "three"));
            if (rng.nextInt(3) == 0) part(body, boundary, "shapes", pick(rng, "x=1x3x224x224", "x=1x3x99999999x99999", "x=0", "x=-1", "=1", "x=", "x=1x", ",,,", "Input3=1x1x28x28",
                    "x=" + "9".repeat(40), "a=1,a=2"));
            if (rng.nextInt(8) == 0) part(body, boundary, pick(rng, "format", "unknown_field", "model_name"), pick(rng, "onnx", "relay", "tflite", ""));
            String fileName = rng.nextInt(10) == 0 ? pick(rng, "../../etc/passwd", "", "a\"b.onnx", "x".repeat(3000) + ".onnx", "model") : model.name();
            if (rng.nextInt(15) > 0) {
                write(body, "--" + boundary + "\r\nContent-Disposition: form-data; name=\"model\"; filename=\"" + fileName + "\"\r\nContent-Type: application/octet-stream\r\n\r\n");
                body.writeBytes(bytes);
                write(body, "\r\n");
            }
            if (rng.nextInt(10) > 0) write(body, "--" + boundary + "--\r\n");
            byte[] raw = body.toByteArray();
            if (rng.nextInt(10) == 0) raw = m.mutateBytes(raw, 1 + rng.nextInt(3), List.of()); // the multipart framing itself broken
            String declared = rng.nextInt(15) == 0 ? "wrong" + boundary : boundary;
            headers.put("Content-Type", "multipart/form-data; boundary=" + declared);
            return new Request("POST", "/api/v1/jobs", headers, raw, "submit " + model.name());
        }
        if (kind < 11) { // other content types
            headers.put("Content-Type", pick(rng, "application/json", "application/x-www-form-urlencoded", "text/plain", "application/octet-stream", "multipart/form-data",
                    "multipart/mixed; boundary=x"));
            byte[] body = rng.nextBoolean() ? "{\"model\":\"def @main() { 1 }\"}".getBytes(StandardCharsets.UTF_8) : models.get(rng.nextInt(models.size())).bytes();
            return new Request("POST", "/api/v1/jobs", headers, body, "submit as " + headers.get("Content-Type"));
        }
        if (kind < 13) { // credentials
            String auth = pick(rng, null, "Bearer", "Bearer ", "Bearer wrong", "Basic dXNlcjpwYXNz", "bearer " + token, "Bearer " + token + "x", "Bearer \u00e9\u00e9");
            if (auth == null) headers.remove("Authorization");
            else headers.put("Authorization", auth);
            return new Request(rng.nextBoolean() ? "GET" : "POST", "/api/v1/jobs", headers, new byte[0], "auth " + auth);
        }
        // paths, methods, queries
        String id = rng.nextBoolean() ? UUID.randomUUID().toString()
                : java.net.URLEncoder.encode(pick(rng, "not-a-uuid", "\u0000", "..", "%2e%2e", "1", "' OR 1=1 --", "x".repeat(2000), "\u00e9/../x"), StandardCharsets.UTF_8);
        String path = pick(rng, "/api/v1/jobs/" + id, "/api/v1/jobs/" + id + "/artifact", "/api/v1/jobs/" + id + "/cancel", "/api/v1/jobs/" + id + "/events",
                "/api/v1%2fjobs", "/api/v1/jobs/..%2f..%2f", "/api/v1/jobs?limit=-1", "/api/v1/jobs?limit=999999999999", "/api/v1/jobs?status=NOPE",
                "/api/v1/jobs?status=QUEUED&limit=abc", "/api/v1/nothing", "/api/v1/jobs/%25ZZ", "/api/v1/jobs;jsessionid=1", "/api/v2/jobs", "/api/v1/jobs//");
        String method = pick(rng, "GET", "POST", "PUT", "DELETE", "PATCH");
        if (path.endsWith("/events")) method = "GET"; // a random id: answered at once (404), never a stream left open
        return new Request(method, path, headers, new byte[0], method + " " + path);
    }

    private static void part(ByteArrayOutputStream body, String boundary, String name, String value) {
        write(body, "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n");
    }

    private static void write(ByteArrayOutputStream out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
    }

    @SafeVarargs
    private static <T> T pick(Random rng, T... options) {
        return options[rng.nextInt(options.length)];
    }

    /** The repository's examples and, where the ONNX data is present, small real models and node tests. */
    static List<Model> models() throws IOException {
        List<Model> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of("../examples"))) {
            for (Path p : files.filter(p -> p.toString().endsWith(".relay")).sorted().toList()) out.add(new Model(p.getFileName().toString(), Files.readAllBytes(p)));
        }
        for (String name : List.of("mnist8_cntk", "mnist_mlp_onnxmlir")) {
            OnnxTestData.models().map(d -> d.resolve(name).resolve("model.onnx")).filter(Files::isRegularFile)
                    .ifPresent(p -> out.add(new Model(name + ".onnx", readAll(p))));
        }
        for (String name : List.of("test_relu", "test_add_bcast", "test_conv_with_strides_padding", "test_softmax_axis_1", "test_reshape_negative_dim",
                "test_if", "test_loop11", "test_resize_upsample_scales_linear")) {
            OnnxTestData.nodeTests().map(d -> d.resolve(name).resolve("model.onnx")).filter(Files::isRegularFile)
                    .ifPresent(p -> out.add(new Model(name + ".onnx", readAll(p))));
        }
        return out;
    }

    private static byte[] readAll(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
