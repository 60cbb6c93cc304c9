package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import java.net.URI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.MissingServletRequestParameterException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.multipart.MaxUploadSizeExceededException;
import org.springframework.web.multipart.MultipartException;
import org.springframework.web.multipart.support.MissingServletRequestPartException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Turns every failure of a gateway call into an {@code application/problem+json} body: our own {@link ApiProblem}s,
 * Spring MVC's (missing part, wrong method, unknown path, upload too large — via {@link ResponseEntityExceptionHandler},
 * with the detail rewritten where Spring's wording does not name the field), and anything unexpected as a 500 whose
 * detail names the exception (the stack trace goes to the log, not to the client).
 */
@RestControllerAdvice
@ServiceRole(Stage.GATEWAY)
public class ProblemHandler extends ResponseEntityExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(ProblemHandler.class);
    private final GatewayProperties props;

    public ProblemHandler(GatewayProperties props) {
        this.props = props;
    }

    @ExceptionHandler(ApiProblem.class)
    ResponseEntity<ProblemDetail> apiProblem(ApiProblem e) {
        return respond(e.toProblem());
    }

    /** A body the multipart parser cannot read (wrong boundary, truncated, broken part headers) is the client's error. */
    @ExceptionHandler(MultipartException.class)
    ResponseEntity<ProblemDetail> badMultipart(MultipartException e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        return respond(ApiProblem.problem(ProblemType.BAD_MULTIPART, "the body is not well-formed multipart/form-data"
                + (root != e && root.getMessage() != null ? " (" + root.getMessage() + ")" : "")));
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<ProblemDetail> unexpected(Exception e) {
        log.error("gateway call failed", e);
        return respond(ApiProblem.problem(ProblemType.INTERNAL,
                "the gateway failed: " + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage())));
    }

    @Override
    protected ResponseEntity<Object> handleMissingServletRequestPart(MissingServletRequestPartException ex, HttpHeaders headers,
                                                                     HttpStatusCode status, WebRequest request) {
        return cast(respond(ApiProblem.problem(ProblemType.MISSING_PART,
                "the multipart request has no '" + ex.getRequestPartName() + "' part")));
    }

    @Override
    protected ResponseEntity<Object> handleMissingServletRequestParameter(MissingServletRequestParameterException ex, HttpHeaders headers,
                                                                          HttpStatusCode status, WebRequest request) {
        return cast(respond(ApiProblem.problem(ProblemType.MISSING_PART,
                "the request has no '" + ex.getParameterName() + "' " + (ex.isMissingAfterConversion() ? "value" : "part"))));
    }

    @Override
    protected ResponseEntity<Object> handleMaxUploadSizeExceededException(MaxUploadSizeExceededException ex, HttpHeaders headers,
                                                                          HttpStatusCode status, WebRequest request) {
        return cast(respond(ApiProblem.problem(ProblemType.UPLOAD_TOO_LARGE,
                "the upload exceeds the limit of " + props.maxUploadSize().toBytes() + " bytes (relayfarm.gateway.max-upload-size)")));
    }

    /** Spring's own problems (405, 404 for unknown paths, 406, 415, ...): keep their detail, use our type URIs. */
    @Override
    protected ResponseEntity<Object> createResponseEntity(Object body, HttpHeaders headers, HttpStatusCode statusCode, WebRequest request) {
        if (body instanceof ProblemDetail p && (p.getType() == null || "about:blank".equals(p.getType().toString()))) {
            p.setType(URI.create("/api/v1/docs#problem-http-" + statusCode.value()));
        }
        HttpHeaders h = new HttpHeaders();
        h.addAll(headers);
        h.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        return new ResponseEntity<>(body, h, statusCode);
    }

    private static ResponseEntity<ProblemDetail> respond(ProblemDetail p) {
        return ResponseEntity.status(p.getStatus()).contentType(MediaType.APPLICATION_PROBLEM_JSON).body(p);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ResponseEntity<Object> cast(ResponseEntity<ProblemDetail> r) {
        return (ResponseEntity) r;
    }
}
