package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;

/** Binds {@link GatewayProperties} in processes that run the gateway role. */
@Configuration(proxyBeanMethods = false)
@ServiceRole("gateway")
@EnableConfigurationProperties({GatewayProperties.class, QuotaProperties.class})
public class GatewayConfig {
}
