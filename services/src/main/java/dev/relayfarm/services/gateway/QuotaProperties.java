package dev.relayfarm.services.gateway;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Per-token quotas of the gateway ({@code relayfarm.gateway.quota.*}), keyed by the token's id (the SHA-256 of the
 * bearer token, {@link GatewayToken#id}), so they hold per client once there are several tokens. A submit over a
 * quota is answered 429 problem+json naming the quota, the limit and the current use.
 *
 * @param maxActiveJobs    jobs of one token QUEUED or running at once. 50: a local farm compiles one model per stage
 *                         at a time, so 50 is hours of backlog — room for a burst (the e2e tests submit 20 at once)
 *                         while one runaway script cannot queue thousands of jobs in front of everybody else
 * @param maxStoredUploads bytes of uploads one token keeps in the farm (distinct models of its jobs not yet expired by
 *                         {@code relayfarm.retention.finished-jobs}). 4 GB: sixteen uploads at the 256 MB upload limit,
 *                         far more of the usual few-MB models, and a bound on what one client can put in PostgreSQL
 */
@ConfigurationProperties("relayfarm.gateway.quota")
public record QuotaProperties(@DefaultValue("50") int maxActiveJobs, @DefaultValue("4GB") DataSize maxStoredUploads) {
    public QuotaProperties {
        if (maxActiveJobs < 1) throw new IllegalArgumentException("relayfarm.gateway.quota.max-active-jobs must be >= 1, got " + maxActiveJobs);
    }
}
