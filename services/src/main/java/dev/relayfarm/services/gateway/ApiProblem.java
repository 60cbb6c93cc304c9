package dev.relayfarm.services.gateway;

import java.util.Map;
import org.springframework.http.ProblemDetail;

/**
 * A client-visible failure of a gateway call, rendered as {@code application/problem+json} (RFC 9457) by
 * {@link ProblemHandler}: a {@link ProblemType} (status, title, type URI) and a detail that says exactly what was
 * wrong, naming the field and the value.
 */
public final class ApiProblem extends RuntimeException {
    private final ProblemType type;
    private final Map<String, Object> properties;

    public ApiProblem(ProblemType type, String detail) {
        this(type, detail, Map.of());
    }

    /** With extension members of the problem body (RFC 9457 section 3.2), e.g. a quota's name, limit and current use. */
    public ApiProblem(ProblemType type, String detail, Map<String, Object> properties) {
        super(detail);
        this.type = type;
        this.properties = Map.copyOf(properties);
    }

    public static ApiProblem jobNotFound(Object id) {
        return new ApiProblem(ProblemType.JOB_NOT_FOUND, "no job with id " + id);
    }

    public ProblemType type() {
        return type;
    }

    public ProblemDetail toProblem() {
        ProblemDetail p = problem(type, getMessage());
        properties.forEach(p::setProperty);
        return p;
    }

    /** The one way the gateway builds problem bodies (handlers, the auth filter and this class use it). */
    static ProblemDetail problem(ProblemType type, String detail) {
        ProblemDetail p = ProblemDetail.forStatusAndDetail(type.status, detail);
        p.setType(type.uri());
        p.setTitle(type.title);
        return p;
    }
}
