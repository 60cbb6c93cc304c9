package dev.relayfarm.infra;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.artifact.ArtifactArchive;
import dev.relayfarm.artifact.Manifest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The farm's REST API v1 from the outside, with nothing but {@code java.net.http}: submit a model
 * (multipart), read a job, follow it until it ends, download and unpack its artifact. The demo and the e2e
 * tests use it; every non-2xx answer becomes a {@link ApiException} carrying the status and the problem body.
 */
public final class FarmClient {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> TERMINAL = Set.of("SUCCEEDED", "FAILED", "CANCELLED");

    private final String baseUrl;
    private final String token;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    public FarmClient(String baseUrl, String token) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.token = token;
    }

    /** A non-2xx answer: the HTTP status and the response body (a problem+json document from the gateway). */
    public static final class ApiException extends RuntimeException {
        public final int status;
        public final String body;

        ApiException(String what, int status, String body) {
            super(what + ": HTTP " + status + " " + body);
            this.status = status;
            this.body = body;
        }
    }

    /**
     * {@code POST /api/v1/jobs}: the model file as part {@code model}, plus form fields ({@code target},
     * {@code opt_level}, {@code shapes}); returns the new job's id.
     */
    public String submit(String fileName, byte[] model, Map<String, String> fields) {
        String boundary = "relayfarm-" + UUID.randomUUID();
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (Map.Entry<String, String> f : fields.entrySet()) {
            write(body, "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + f.getKey() + "\"\r\n\r\n" + f.getValue() + "\r\n");
        }
        write(body, "--" + boundary + "\r\nContent-Disposition: form-data; name=\"model\"; filename=\"" + fileName
                + "\"\r\nContent-Type: application/octet-stream\r\n\r\n");
        body.writeBytes(model);
        write(body, "\r\n--" + boundary + "--\r\n");
        HttpRequest req = request("/api/v1/jobs").header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())).build();
        JsonNode created = json(send(req, "submit " + fileName));
        String id = created.path("id").asText("");
        if (id.isEmpty()) throw new IllegalStateException("submit " + fileName + ": the answer has no id: " + created);
        return id;
    }

    public String submit(Path model, Map<String, String> fields) throws IOException {
        return submit(model.getFileName().toString(), Files.readAllBytes(model), fields);
    }

    /** {@code GET /api/v1/jobs/{id}}. */
    public JsonNode job(String id) {
        return json(send(request("/api/v1/jobs/" + id).GET().build(), "job " + id));
    }

    /** {@code GET /api/v1/jobs?status=&limit=}. */
    public JsonNode jobs(String query) {
        return json(send(request("/api/v1/jobs" + (query.isEmpty() ? "" : "?" + query)).GET().build(), "jobs"));
    }

    /** {@code POST /api/v1/jobs/{id}/cancel}. */
    public JsonNode cancel(String id) {
        return json(send(request("/api/v1/jobs/" + id + "/cancel").POST(HttpRequest.BodyPublishers.noBody()).build(), "cancel " + id));
    }

    /**
     * Polls the job until it is SUCCEEDED, FAILED or CANCELLED, calling {@code onChange} with each new status
     * (every 100 ms: the stages of a small model take tens of milliseconds, and the GET is cheap).
     */
    public JsonNode await(String id, Duration timeout, Consumer<JsonNode> onChange) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (true) {
            JsonNode job = job(id);
            String status = job.path("status").asText();
            if (!status.equals(last)) {
                last = status;
                onChange.accept(job);
            }
            if (TERMINAL.contains(status)) return job;
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("job " + id + " is still " + status + " after " + timeout.toSeconds() + " s: " + job);
            }
            Thread.sleep(100);
        }
    }

    /**
     * Follows {@code GET /api/v1/jobs/{id}/events} (server-sent events) until the gateway ends the stream (the job
     * is terminal), handing each {@code job-event} (a job_events row: stage, kind, status, duration_ms, message) to
     * {@code onEvent}; then returns the job as {@link #job} shows it.
     */
    public JsonNode follow(String id, Consumer<JsonNode> onEvent) throws InterruptedException {
        HttpRequest req = request("/api/v1/jobs/" + id + "/events").timeout(Duration.ofHours(1)).header("Accept", "text/event-stream").GET().build();
        HttpResponse<java.util.stream.Stream<String>> r;
        try {
            r = http.send(req, HttpResponse.BodyHandlers.ofLines());
        } catch (IOException e) {
            throw new IllegalStateException("events of job " + id + ": " + req.uri() + " is unreachable: " + e, e);
        }
        if (r.statusCode() / 100 != 2) {
            throw new ApiException("events of job " + id, r.statusCode(), String.join("\n", r.body().toList()));
        }
        String event = "message";
        StringBuilder data = new StringBuilder();
        try (java.util.stream.Stream<String> lines = r.body()) {
            for (Iterator<String> it = lines.iterator(); it.hasNext(); ) {
                String line = it.next();
                if (line.isEmpty()) {
                    if (event.equals("end")) break;
                    if (event.equals("job-event") && !data.isEmpty()) onEvent.accept(json(data.toString()));
                    event = "message";
                    data.setLength(0);
                } else if (line.startsWith("event:")) {
                    event = line.substring(6).strip();
                } else if (line.startsWith("data:")) {
                    if (!data.isEmpty()) data.append('\n');
                    data.append(line.substring(5).strip());
                }
            }
        }
        return job(id);
    }

    /** {@code GET /api/v1/jobs/{id}/artifact} unpacked into {@code dir}; returns the folder holding manifest.json. */
    public Path downloadArtifact(String id, Path dir) throws IOException {
        HttpResponse<InputStream> r;
        try {
            r = http.send(request("/api/v1/jobs/" + id + "/artifact").GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while downloading the artifact of job " + id, e);
        }
        if (r.statusCode() / 100 != 2) {
            try (InputStream in = r.body()) {
                throw new ApiException("artifact of job " + id, r.statusCode(), new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        Files.createDirectories(dir);
        try (InputStream in = r.body()) {
            return artifactFolder(ArtifactArchive.unpack(in, dir));
        }
    }

    /** The folder of an unpacked artifact: where its manifest.json landed. */
    static Path artifactFolder(List<Path> files) throws IOException {
        return files.stream().filter(f -> f.getFileName().toString().equals(Manifest.FILE)).findFirst().map(Path::getParent)
                .orElseThrow(() -> new IOException("the artifact has no " + Manifest.FILE));
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofMinutes(2)).header("Authorization", "Bearer " + token);
    }

    private String send(HttpRequest req, String what) {
        HttpResponse<String> r;
        try {
            r = http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(what + ": " + req.uri() + " is unreachable: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(what + ": interrupted", e);
        }
        if (r.statusCode() / 100 != 2) throw new ApiException(what, r.statusCode(), r.body());
        return r.body();
    }

    private static JsonNode json(String body) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new IllegalStateException("the gateway answered something that is not JSON: " + body, e);
        }
    }

    private static void write(ByteArrayOutputStream out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
    }
}
