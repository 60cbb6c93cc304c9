package dev.relayfarm.services.gateway;

import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.CompileRequest;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.JobStatus;
import io.opentelemetry.api.trace.Span;
import java.io.IOException;
import java.net.URI;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestPart;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.multipart.MultipartFile;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.support.ServletUriComponentsBuilder;

/**
 * REST API v1 for compile jobs (issue 6; described in {@code gateway/openapi.json}). Thin: checks the request,
 * then asks {@link JobRepository}, {@link CompileRequests} or {@link JobEventStreams}. Every call needs the
 * {@link Role#SUBMITTER} role.
 */
@RestController
@ServiceRole(Stage.GATEWAY)
@RequiresRole(Role.SUBMITTER)
@RequestMapping("/api/v1/jobs")
public class JobsController {
    private static final Logger log = LoggerFactory.getLogger(JobsController.class);
    static final int DEFAULT_LIMIT = 50;
    static final int MAX_LIMIT = 500;

    private final JobRepository jobs;
    private final CompileRequests requests;
    private final GatewayTracing tracing;
    private final JobEventStreams streams;
    private final ArtifactDownloads downloads;

    public JobsController(JobRepository jobs, CompileRequests requests, GatewayTracing tracing, JobEventStreams streams, ArtifactDownloads downloads) {
        this.jobs = jobs;
        this.requests = requests;
        this.tracing = tracing;
        this.streams = streams;
        this.downloads = downloads;
    }

    @PostMapping(consumes = MediaType.MULTIPART_FORM_DATA_VALUE)
    ResponseEntity<Map<String, Object>> submit(@RequestPart("model") MultipartFile model,
                                               @RequestParam(name = "target", required = false) String target,
                                               @RequestParam(name = "opt_level", required = false) String optLevel,
                                               @RequestParam(name = "shapes", required = false) String shapes,
                                               @RequestParam(name = "tune", required = false) String tune,
                                               @RequestParam(name = "quantize", required = false) String quantize,
                                               @RequestParam(name = "format", required = false) String format,
                                               @RequestAttribute(name = BearerTokenFilter.TOKEN_ID, required = false) String tokenId) throws IOException {
        JobSubmission s = check(model, target, optLevel, shapes, tune, quantize, format);
        UUID id = UUID.randomUUID();
        Span.current().setAttribute(GatewayTracing.JOB_ID, id.toString())
                .setAttribute(GatewayTracing.MODEL, s.modelName()).setAttribute(GatewayTracing.TARGET, s.target());
        jobs.create(id, s, GatewayTracing.traceId(), tokenId);
        try {
            requests.send(requests.envelope(id, s, tracing.traceparent()));
        } catch (CompileRequests.SendFailed e) {
            log.error("job {}: {}", id, e.getMessage(), e);
            jobs.failUnqueued(id, e.getMessage());
            throw new ApiProblem(ProblemType.QUEUE_UNAVAILABLE,
                    "job " + id + " was recorded but could not be queued, so it is FAILED: " + e.getMessage());
        }
        log.info("job {} queued: {} ({}, {} bytes) for {} -O{}", id, s.modelName(), s.format().wireName, s.model().length, s.target(), s.optLevel());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", id);
        body.put("status", JobStatus.QUEUED);
        body.put("links", JobLinks.of(id, JobStatus.QUEUED));
        URI location = ServletUriComponentsBuilder.fromCurrentContextPath().path(JobLinks.self(id)).build().toUri();
        return ResponseEntity.created(location).body(body);
    }

    @GetMapping("/{id}")
    JobView get(@PathVariable("id") String id) {
        UUID job = jobId(id);
        return jobs.find(job).orElseThrow(() -> ApiProblem.jobNotFound(job));
    }

    @GetMapping
    Map<String, Object> list(@RequestParam(name = "status", required = false) String status,
                             @RequestParam(name = "limit", required = false) String limit) {
        Optional<JobStatus> filter = status == null || status.isBlank() ? Optional.empty() : Optional.of(status(status));
        int n = limit == null || limit.isBlank() ? DEFAULT_LIMIT : intIn(ProblemType.BAD_LIMIT, "limit", limit, 1, MAX_LIMIT);
        List<JobSummary> rows = jobs.list(filter, n);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("jobs", rows);
        body.put("count", rows.size());
        body.put("limit", n);
        return body;
    }

    @PostMapping("/{id}/cancel")
    JobView cancel(@PathVariable("id") String id) {
        UUID job = jobId(id);
        var outcome = jobs.cancel(job).orElseThrow(() -> ApiProblem.jobNotFound(job));
        if (!outcome.cancelled()) {
            throw new ApiProblem(ProblemType.JOB_TERMINAL,
                    "job " + job + " is already " + outcome.before() + " and can no longer be cancelled");
        }
        log.info("job {} cancelled while {}", job, outcome.before());
        return jobs.find(job).orElseThrow(() -> ApiProblem.jobNotFound(job));
    }

    @GetMapping("/{id}/artifact")
    ResponseEntity<byte[]> artifact(@PathVariable("id") String id) {
        return downloads.of(jobId(id));
    }

    @GetMapping(path = "/{id}/events", produces = {MediaType.TEXT_EVENT_STREAM_VALUE, MediaType.APPLICATION_PROBLEM_JSON_VALUE})
    SseEmitter events(@PathVariable("id") String id, @RequestHeader(name = "Last-Event-ID", required = false) String lastEventId) {
        UUID job = jobId(id);
        if (jobs.status(job).isEmpty()) throw ApiProblem.jobNotFound(job);
        long after = 0;
        if (lastEventId != null && !lastEventId.isBlank()) {
            try {
                after = Long.parseLong(lastEventId.trim());
            } catch (NumberFormatException e) {
                throw new ApiProblem(ProblemType.BAD_LAST_EVENT_ID, "Last-Event-ID must be an event id (an integer), got '" + lastEventId + "'");
            }
        }
        return streams.open(job, after);
    }

    private JobSubmission check(MultipartFile model, String target, String optLevel, String shapes, String tune, String quantize, String format) throws IOException {
        byte[] bytes = model.getBytes();
        String name = model.getOriginalFilename() == null || model.getOriginalFilename().isBlank() ? "model" : model.getOriginalFilename();
        if (bytes.length == 0) throw new ApiProblem(ProblemType.EMPTY_MODEL, "the 'model' part (" + name + ") is empty");
        ModelFormat f = format == null || format.isBlank() ? SubmitFields.detectFormat(name, bytes) : SubmitFields.format(format);
        Target t = SubmitFields.target(target == null || target.isBlank() ? CompileRequest.DEFAULT_TARGET : target);
        int level = optLevel == null || optLevel.isBlank() ? CompileRequest.DEFAULT_OPT_LEVEL
                : intIn(ProblemType.BAD_OPT_LEVEL, "opt_level", optLevel, CompileRequest.OPT_LEVELS.min(), CompileRequest.OPT_LEVELS.max(),
                        Map.of(SubmitFields.CODE, CompileRequest.INVALID_OPT_LEVEL));
        return JobSubmission.of(new CompileRequest(ModelSource.of(name, f, bytes), t, level, SubmitFields.shapes(shapes)), SubmitFields.tune(tune).toString(),
                SubmitFields.quantize(quantize).wireName);
    }

    private static int intIn(ProblemType problem, String field, String text, int min, int max) {
        return intIn(problem, field, text, min, max, Map.of());
    }

    /** {@code text} as an integer in {@code min..max}; otherwise a {@code problem} with the extension {@code members}. */
    private static int intIn(ProblemType problem, String field, String text, int min, int max, Map<String, Object> members) {
        try {
            int v = Integer.parseInt(text.trim());
            if (v >= min && v <= max) return v;
        } catch (NumberFormatException e) {
            // reported below with the value as given
        }
        throw new ApiProblem(problem, field + " must be an integer in " + min + ".." + max + ", got '" + text + "'", members);
    }

    private static JobStatus status(String text) {
        try {
            return JobStatus.valueOf(text.trim().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ApiProblem(ProblemType.BAD_STATUS, "status must be one of "
                    + Arrays.stream(JobStatus.values()).map(Enum::name).collect(Collectors.joining(", ")) + ", got '" + text + "'");
        }
    }

    /** Job ids are UUIDs; anything else is a malformed request (400), not an unknown job (404). */
    public static UUID jobId(String text) {
        try {
            UUID id = UUID.fromString(text);
            // UUID.fromString accepts abbreviated forms like "1-1-1-1-1"; only the canonical 36-character form is an id.
            if (id.toString().equalsIgnoreCase(text)) return id;
        } catch (IllegalArgumentException e) {
            // reported below
        }
        throw new ApiProblem(ProblemType.BAD_JOB_ID, "not a job id: '" + text + "' (expected a UUID like 123e4567-e89b-12d3-a456-426614174000)");
    }
}
