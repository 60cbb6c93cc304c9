package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.RetentionProperties;
import dev.relayfarm.services.store.RetentionSweeper;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The gateway role's settings ({@link GatewayProperties}, quotas, retention, the farm's {@link FarmProperties}), its
 * background work (the retention sweeper runs where uploads are taken), and the role check on every handler
 * ({@link RoleInterceptor}).
 */
@Configuration(proxyBeanMethods = false)
@ServiceRole(Stage.GATEWAY)
@EnableConfigurationProperties({GatewayProperties.class, QuotaProperties.class, RetentionProperties.class, FarmProperties.class})
public class GatewayConfig implements WebMvcConfigurer {
    private final RoleInterceptor roles;

    public GatewayConfig(RoleInterceptor roles) {
        this.roles = roles;
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        // every path: a guarded handler outside /api/v1 (no token there) is refused, not run unchecked
        registry.addInterceptor(roles);
    }

    @Bean
    RetentionSweeper retentionSweeper(JdbcTemplate jdbc, TransactionTemplate tx, JobStore jobs, RetentionProperties retention) {
        return new RetentionSweeper(jdbc, tx, jobs, retention);
    }
}
