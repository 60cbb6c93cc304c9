package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.context.propagation.TextMapSetter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.HandlerMapping;

/**
 * One SERVER span per API call, the root of a job's trace (issue 6: one trace per job across HTTP and every Kafka
 * hop). A W3C {@code traceparent} sent by the client becomes the parent, so a caller's trace continues into the
 * farm. The span is current while the controller runs; {@link #traceparent()} is what compile.requested carries.
 * Uses the application's {@link OpenTelemetry} bean (the service kit's SDK, with its exporter). Without one it uses
 * an SDK of its own that exports nothing: the ids still flow through Kafka, so the stages' spans join one trace
 * per job. (Not {@code GlobalOpenTelemetry.get()}: it would install a no-op global that a later {@code set} rejects.)
 * For the event stream the span covers the call up to the start of streaming, not the stream's lifetime.
 */
@Component
@ServiceRole(Stage.GATEWAY)
@Order(Ordered.HIGHEST_PRECEDENCE + 10)
public class GatewayTracing extends OncePerRequestFilter {
    static final AttributeKey<String> JOB_ID = AttributeKey.stringKey("relayfarm.job.id");
    static final AttributeKey<String> MODEL = AttributeKey.stringKey("relayfarm.model.name");
    static final AttributeKey<String> TARGET = AttributeKey.stringKey("relayfarm.target");

    private static final TextMapGetter<HttpServletRequest> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(HttpServletRequest carrier) {
            return Collections.list(carrier.getHeaderNames());
        }

        @Override
        public String get(HttpServletRequest carrier, String key) {
            return carrier == null ? null : carrier.getHeader(key);
        }
    };
    private static final TextMapSetter<Map<String, String>> MAP = (carrier, key, value) -> {
        if (carrier != null) carrier.put(key, value);
    };

    private final OpenTelemetry otel;
    private final Tracer tracer;

    public GatewayTracing(ObjectProvider<OpenTelemetry> otel) {
        this.otel = otel.getIfAvailable(GatewayTracing::exportingNothing);
        this.tracer = this.otel.getTracer("dev.relayfarm.gateway");
    }

    private static OpenTelemetry exportingNothing() {
        return OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder().build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !BearerTokenFilter.path(request).startsWith("/api/");
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        Context parent = otel.getPropagators().getTextMapPropagator().extract(Context.root(), request, HEADERS);
        Span span = tracer.spanBuilder(request.getMethod() + " " + request.getRequestURI()).setParent(parent)
                .setSpanKind(SpanKind.SERVER)
                .setAttribute("http.request.method", request.getMethod())
                .setAttribute("url.path", request.getRequestURI())
                .startSpan();
        try (Scope ignored = span.makeCurrent()) {
            chain.doFilter(request, response);
        } catch (IOException | ServletException | RuntimeException e) {
            span.recordException(e);
            span.setStatus(StatusCode.ERROR);
            throw e;
        } finally {
            // The matched route (e.g. /api/v1/jobs/{id}) names the span; raw paths would make one name per job.
            Object route = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
            if (route != null) {
                span.updateName(request.getMethod() + " " + route);
                span.setAttribute("http.route", route.toString());
            }
            span.setAttribute("http.response.status_code", (long) response.getStatus());
            if (response.getStatus() >= 500) span.setStatus(StatusCode.ERROR);
            span.end();
        }
    }

    /** The W3C traceparent of the current span, or null when tracing is a no-op (no SDK configured). */
    String traceparent() {
        Map<String, String> carrier = new HashMap<>();
        otel.getPropagators().getTextMapPropagator().inject(Context.current(), carrier, MAP);
        String tp = carrier.get("traceparent");
        if (tp == null) {
            // The no-op propagator injects nothing even for a valid span: fall back to W3C's own format.
            var sc = Span.current().getSpanContext();
            if (sc.isValid()) tp = "00-" + sc.getTraceId() + "-" + sc.getSpanId() + "-" + sc.getTraceFlags().asHex();
        }
        return tp;
    }

    /** The current trace id, for jobs.trace_id; null without tracing. */
    static String traceId() {
        var sc = Span.current().getSpanContext();
        return sc.isValid() ? sc.getTraceId() : null;
    }
}
