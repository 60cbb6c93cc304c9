package dev.relayfarm.services.kit;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * W3C trace context through Kafka: the {@code traceparent} (and {@code tracestate}) record headers carry
 * the job's trace from the gateway through every stage, so one job is one trace. The envelope repeats
 * {@code traceparent} for consumers that only see the value (the DLQ, the database).
 */
public final class KafkaTraceContext {
    public static final String TRACEPARENT = "traceparent";

    private static final TextMapGetter<Headers> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers carrier) {
            List<String> keys = new ArrayList<>();
            for (Header h : carrier) keys.add(h.key());
            return keys;
        }

        @Override
        public String get(Headers carrier, String key) {
            if (carrier == null) return null;
            Header h = carrier.lastHeader(key);
            return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
        }
    };

    private static final TextMapGetter<Map<String, String>> MAP = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private KafkaTraceContext() {}

    /** The context a message carries: its headers, else the envelope's {@code traceparent}, else none (the root). */
    public static Context extract(OpenTelemetry otel, Headers headers, String envelopeTraceparent) {
        TextMapPropagator p = otel.getPropagators().getTextMapPropagator();
        if (headers != null && headers.lastHeader(TRACEPARENT) != null) return p.extract(Context.root(), headers, HEADERS);
        if (envelopeTraceparent != null) return p.extract(Context.root(), Map.of(TRACEPARENT, envelopeTraceparent), MAP);
        return Context.root();
    }

    /** The propagation fields of {@code context} ({@code traceparent}, maybe {@code tracestate}) to put on an outgoing record. */
    public static Map<String, String> inject(OpenTelemetry otel, Context context) {
        Map<String, String> fields = new HashMap<>();
        otel.getPropagators().getTextMapPropagator().inject(context, fields, (carrier, key, value) -> carrier.put(key, value));
        return fields;
    }

    /** Puts {@code fields} on {@code headers}, replacing earlier values. */
    public static void write(Map<String, String> fields, Headers headers) {
        for (var e : fields.entrySet()) {
            headers.remove(e.getKey());
            headers.add(e.getKey(), e.getValue().getBytes(StandardCharsets.UTF_8));
        }
    }
}
