package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.Devices;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.stereotype.Component;

/**
 * Marks OFFLINE the devices whose agent went silent for {@code relayfarm.farm.device-offline-after} (default 15 s),
 * every {@code relayfarm.farm.device-sweep} (default 2 s; 0 turns it off), so the devices list and whoever schedules
 * work by it stop counting a dead agent within seconds. An agent that beats again sets its own status back. Runs in
 * the gateway's process, like the retention sweeper; several gateways sweeping at once do the same idempotent update.
 */
@Component
@ServiceRole(Stage.GATEWAY)
public class DeviceSweeper implements InitializingBean, DisposableBean {
    private static final Logger LOG = LoggerFactory.getLogger(DeviceSweeper.class);

    private final Devices devices;
    private final FarmProperties props;
    private ScheduledExecutorService timer;

    public DeviceSweeper(Devices devices, FarmProperties props) {
        this.devices = devices;
        this.props = props;
    }

    @Override
    public void afterPropertiesSet() {
        if (props.deviceSweep().isZero()) return;
        timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("device-sweeper").unstarted(r));
        long every = props.deviceSweep().toMillis();
        timer.scheduleWithFixedDelay(() -> {
            try {
                sweep();
            } catch (Throwable e) {
                // anything, Errors included: a scheduled task that throws is never run again
                LOG.warn("device sweep failed (next in {}): {}", props.deviceSweep(), e.toString());
            }
        }, every, every, TimeUnit.MILLISECONDS);
    }

    @Override
    public void destroy() {
        if (timer != null) timer.shutdownNow();
    }

    /** One sweep: the ids of the devices it marked OFFLINE. */
    public List<String> sweep() {
        List<String> offline = devices.markOffline(props.deviceOfflineAfter());
        if (!offline.isEmpty()) LOG.info("devices OFFLINE after no heartbeat for {}: {}", props.deviceOfflineAfter(), offline);
        return offline;
    }
}
