package dev.relayfarm.services.gateway;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The gateway's side of the tuning farm ({@code relayfarm.farm.*}). The auto-approve policy is the store's
 * ({@code relayfarm.farm.auto-approve.*}, {@link dev.relayfarm.services.store.AutoApproveProperties}): workers apply it.
 *
 * @param deviceOfflineAfter a device whose agent has not sent a heartbeat for this long is marked OFFLINE: agents beat
 *                           every few seconds, so 15 s is several missed beats, not one slow one
 * @param deviceSweep        how often {@link DeviceSweeper} looks for such devices; 0 turns it off
 * @param runEventInterval   how often a tuning run's event stream sends the run's view
 * @param runEventLimit      how long one such stream stays open at most
 */
@ConfigurationProperties("relayfarm.farm")
public record FarmProperties(
        @DefaultValue("15s") Duration deviceOfflineAfter,
        @DefaultValue("2s") Duration deviceSweep,
        @DefaultValue("1s") Duration runEventInterval,
        @DefaultValue("30m") Duration runEventLimit) {
}
