package dev.relayfarm.services.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.Writer;
import java.net.URI;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Errors that never reach Spring MVC answer problem+json too, like every other gateway error:
 * <ul>
 *   <li>requests the servlet container rejects before any application code runs ({@code /api/v1%2fjobs}: Tomcat
 *       refuses encoded slashes; malformed URIs, bad headers) — Tomcat's host renders them with its
 *       {@link ErrorReportValve}, an HTML page; {@link Valve} replaces it;</li>
 *   <li>errors the container forwards to {@code /error} (an exception in a filter, a {@code sendError}) — Spring Boot's
 *       {@code BasicErrorController} would answer its own JSON shape or an HTML "Whitelabel" page;
 *       {@link Controller} replaces it.</li>
 * </ul>
 * Both use {@code /api/v1/docs#problem-http-<status>} as the type, as {@link ProblemHandler} does for Spring's own
 * HTTP errors.
 */
public final class ContainerProblems {
    private ContainerProblems() {}

    static ProblemDetail problem(int status, String detail, String instance) {
        HttpStatus s = HttpStatus.resolve(status);
        ProblemDetail p = ProblemDetail.forStatus(status);
        p.setType(URI.create("/api/v1/docs#problem-http-" + status));
        p.setTitle(s == null ? "HTTP " + status : s.getReasonPhrase());
        p.setDetail(detail);
        if (instance != null) {
            try {
                p.setInstance(URI.create(instance));
            } catch (IllegalArgumentException e) {
                // a URI Tomcat rejected may not parse here either: leave it out
            }
        }
        return p;
    }

    /** Installs {@link Valve} as the host's error report valve (Tomcat creates it by class name when the host starts). */
    @Component
    @ServiceRole(Stage.GATEWAY)
    public static class TomcatCustomizer implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {
        @Override
        public void customize(TomcatServletWebServerFactory factory) {
            factory.addContextCustomizers(context -> {
                if (context.getParent() instanceof StandardHost host) host.setErrorReportValveClass(Valve.class.getName());
            });
        }
    }

    /** Tomcat's error report as problem+json instead of an HTML page; never shows a stack trace or the server version. */
    public static class Valve extends ErrorReportValve {
        private static final ObjectMapper JSON = new ObjectMapper();

        @Override
        protected void report(Request request, Response response, Throwable throwable) {
            int status = response.getStatus();
            if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) return;
            AtomicBoolean ioAllowed = new AtomicBoolean(true);
            response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
            if (!ioAllowed.get()) return;
            String message = response.getMessage();
            String detail = message != null && !message.isBlank() ? message
                    : status == 400 ? "the request was rejected by the server before it reached the API (e.g. an encoded '/' or an invalid character in the path)"
                    : "the server could not handle the request";
            if (status == 400 && request.getRequestURI() != null && request.getRequestURI().toLowerCase(java.util.Locale.ROOT).contains("%2f")) {
                detail = "the path contains an encoded '/' (%2F), which is not allowed: write '/' itself, e.g. /api/v1/jobs";
            }
            try {
                response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
                response.setCharacterEncoding("utf-8");
                Writer w = response.getReporter();
                if (w != null) {
                    w.write(JSON.writeValueAsString(problemMap(problem(status, detail, request.getRequestURI()))));
                    response.finishResponse();
                }
            } catch (IOException | IllegalStateException e) {
                // the client went away, or the response was committed meanwhile: nothing left to tell it
            }
        }

        private static java.util.Map<String, Object> problemMap(ProblemDetail p) {
            java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
            m.put("type", p.getType().toString());
            m.put("title", p.getTitle());
            m.put("status", p.getStatus());
            m.put("detail", p.getDetail());
            if (p.getInstance() != null) m.put("instance", p.getInstance().toString());
            return m;
        }
    }

    /** {@code /error} (Spring Boot's error path) as problem+json. */
    @RestController
    @ServiceRole(Stage.GATEWAY)
    public static class Controller implements ErrorController {
        @RequestMapping("${server.error.path:${error.path:/error}}")
        ResponseEntity<ProblemDetail> error(HttpServletRequest request) {
            Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
            int status = code instanceof Integer i ? i : 500;
            Object message = request.getAttribute(RequestDispatcher.ERROR_MESSAGE);
            Object uri = request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI);
            Object ex = request.getAttribute(RequestDispatcher.ERROR_EXCEPTION);
            String detail = message instanceof String m && !m.isBlank() ? m
                    : ex instanceof Throwable t ? "the gateway failed: " + t.getClass().getSimpleName()
                    : HttpStatus.resolve(status) != null ? HttpStatus.resolve(status).getReasonPhrase() : "HTTP " + status;
            return ResponseEntity.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .body(problem(status, detail, uri instanceof String s ? s : null));
        }
    }
}
