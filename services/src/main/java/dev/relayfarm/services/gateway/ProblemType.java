package dev.relayfarm.services.gateway;

import java.net.URI;
import org.springframework.http.HttpStatus;

/**
 * Every kind of problem the gateway reports. The problem body's {@code type} is {@code /api/v1/docs#problem-<slug>};
 * the OpenAPI document lists each slug under {@code x-problem-types} for the docs page ({@code OpenApiDocumentTest}
 * keeps the two in step). Spring MVC's own HTTP errors (unknown path, wrong method, ...) use {@code problem-http-<status>}.
 */
public enum ProblemType {
    UNAUTHORIZED("unauthorized", HttpStatus.UNAUTHORIZED, "Unauthorized"),
    FORBIDDEN("forbidden", HttpStatus.FORBIDDEN, "Forbidden"),
    MISSING_PART("missing-part", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_MULTIPART("bad-multipart", HttpStatus.BAD_REQUEST, "Invalid request"),
    EMPTY_MODEL("empty-model", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_FORMAT("bad-format", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_TARGET("bad-target", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_OPT_LEVEL("bad-opt-level", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_SHAPES("bad-shapes", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_TUNE("bad-tune", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_QUANTIZE("bad-quantize", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_STATUS("bad-status", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_LIMIT("bad-limit", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_JOB_ID("bad-job-id", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_LAST_EVENT_ID("bad-last-event-id", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_ID("bad-id", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_BODY("bad-body", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_TUNING_RUN("bad-tuning-run", HttpStatus.BAD_REQUEST, "Invalid request"),
    NOTE_REQUIRED("note-required", HttpStatus.BAD_REQUEST, "Invalid request"),
    BAD_RECORDS("bad-records", HttpStatus.BAD_REQUEST, "Invalid request"),
    JOB_NOT_FOUND("job-not-found", HttpStatus.NOT_FOUND, "Unknown job"),
    DEVICE_NOT_FOUND("device-not-found", HttpStatus.NOT_FOUND, "Unknown device"),
    SCHEDULE_NOT_FOUND("schedule-not-found", HttpStatus.NOT_FOUND, "Unknown schedule"),
    TUNING_RUN_NOT_FOUND("tuning-run-not-found", HttpStatus.NOT_FOUND, "Unknown tuning run"),
    JOB_TERMINAL("job-terminal", HttpStatus.CONFLICT, "Job already finished"),
    JOB_NOT_OPTIMIZED("job-not-optimized", HttpStatus.CONFLICT, "Job has no optimized module"),
    DEVICE_OFFLINE("device-offline", HttpStatus.CONFLICT, "Device offline"),
    SCHEDULE_NOT_PINNED("schedule-not-pinned", HttpStatus.CONFLICT, "Schedule not pinned"),
    TUNING_RUN_FINISHED("tuning-run-finished", HttpStatus.CONFLICT, "Tuning run already finished"),
    ARTIFACT_NOT_READY("artifact-not-ready", HttpStatus.CONFLICT, "Artifact not available"),
    ARTIFACT_EXPIRED("artifact-expired", HttpStatus.GONE, "Artifact deleted by the retention policy"),
    QUOTA_EXCEEDED("quota-exceeded", HttpStatus.TOO_MANY_REQUESTS, "Quota exceeded"),
    UPLOAD_TOO_LARGE("upload-too-large", HttpStatus.PAYLOAD_TOO_LARGE, "Upload too large"),
    QUEUE_UNAVAILABLE("queue-unavailable", HttpStatus.SERVICE_UNAVAILABLE, "Job not queued"),
    INTERNAL("internal", HttpStatus.INTERNAL_SERVER_ERROR, "Internal error");

    public final String slug;
    public final HttpStatus status;
    public final String title;

    ProblemType(String slug, HttpStatus status, String title) {
        this.slug = slug;
        this.status = status;
        this.title = title;
    }

    URI uri() {
        return URI.create("/api/v1/docs#problem-" + slug);
    }
}
