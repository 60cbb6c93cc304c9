package dev.relayfarm.services.store;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How IR is stored between stages ({@code relayfarm.ir.*}); see {@link IrStore}.
 *
 * @param inlineLimitBytes tensors up to this size stay inside the IR document; larger ones become blobs of their own
 */
@ConfigurationProperties("relayfarm.ir")
public record IrProperties(@DefaultValue("1024") long inlineLimitBytes) {}
