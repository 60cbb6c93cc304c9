package dev.relayfarm.services.kit;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The OpenTelemetry SDK every service traces with. Spans are always made (trace ids travel in messages and
 * are stored on jobs), but exported only when {@code relayfarm.otel.endpoint} names an OTLP/HTTP
 * collector (e.g. {@code http://localhost:4318}); locally nothing leaves the process by default.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(OtelProperties.class)
public class TracingConfig {
    private static final Logger LOG = LoggerFactory.getLogger(TracingConfig.class);

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(OpenTelemetry.class)
    public OpenTelemetrySdk openTelemetry(OtelProperties props) {
        String endpoint = props.endpoint();
        var tracer = SdkTracerProvider.builder()
                .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), props.serviceName()))));
        if (!endpoint.isBlank()) {
            String url = endpoint.endsWith("/v1/traces") ? endpoint : endpoint.replaceAll("/+$", "") + "/v1/traces";
            tracer.addSpanProcessor(BatchSpanProcessor.builder(OtlpHttpSpanExporter.builder().setEndpoint(url).build()).build());
            LOG.info("OpenTelemetry: exporting spans to {}", url);
        }
        return OpenTelemetrySdk.builder()
                .setTracerProvider(tracer.build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
    }
}
