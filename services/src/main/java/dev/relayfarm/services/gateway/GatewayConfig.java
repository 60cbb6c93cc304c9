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

/**
 * The gateway role's settings ({@link GatewayProperties}, quotas, retention) and its background work: the retention
 * sweeper runs where uploads are taken.
 */
@Configuration(proxyBeanMethods = false)
@ServiceRole(Stage.GATEWAY)
@EnableConfigurationProperties({GatewayProperties.class, QuotaProperties.class, RetentionProperties.class})
public class GatewayConfig {
    @Bean
    RetentionSweeper retentionSweeper(JdbcTemplate jdbc, TransactionTemplate tx, JobStore jobs, RetentionProperties retention) {
        return new RetentionSweeper(jdbc, tx, jobs, retention);
    }
}
