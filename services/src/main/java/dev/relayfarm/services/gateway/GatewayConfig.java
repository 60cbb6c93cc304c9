package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;

/** Binds {@link GatewayProperties} in processes that run the gateway role. */
@Configuration(proxyBeanMethods = false)
@ServiceRole(Stage.GATEWAY)
@EnableConfigurationProperties({GatewayProperties.class, QuotaProperties.class})
public class GatewayConfig {
}
