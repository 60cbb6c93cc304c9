package dev.relayfarm.services.kit;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Where spans go ({@code relayfarm.otel.*}).
 *
 * @param endpoint    an OTLP/HTTP collector (e.g. {@code http://localhost:4318}); blank: spans stay in the process
 * @param serviceName the {@code service.name} of this process's spans
 */
@ConfigurationProperties("relayfarm.otel")
public record OtelProperties(String endpoint, @DefaultValue("relayfarm") String serviceName) {
    public OtelProperties {
        if (endpoint == null) endpoint = "";
    }
}
