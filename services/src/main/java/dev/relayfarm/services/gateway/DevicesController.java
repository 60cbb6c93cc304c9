package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.DeviceRow;
import dev.relayfarm.services.store.Devices;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The farm's measuring devices: what their hardware agents reported (status, heartbeat, load, failures) and the
 * operator's one lever on them, drain. Reads need any valid token; drain needs {@link Role#OPERATOR}.
 */
@RestController
@ServiceRole(Stage.GATEWAY)
@RequestMapping("/api/v1/devices")
public class DevicesController {
    private static final Logger log = LoggerFactory.getLogger(DevicesController.class);
    private final Devices devices;

    public DevicesController(Devices devices) {
        this.devices = devices;
    }

    @GetMapping
    Map<String, Object> list() {
        List<DeviceRow> rows = devices.list();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("devices", rows);
        body.put("count", rows.size());
        return body;
    }

    @GetMapping("/{id}")
    DeviceRow get(@PathVariable("id") String id) {
        return devices.find(id).orElseThrow(() -> notFound(id));
    }

    /** DRAINING: the agent finishes what it measures and takes nothing new. 409 for an OFFLINE device (no agent to tell). */
    @PostMapping("/{id}/drain")
    @RequiresRole(Role.OPERATOR)
    DeviceRow drain(@PathVariable("id") String id, @RequestAttribute(BearerTokenFilter.CALLER) Caller caller) {
        switch (devices.drain(id)) {
            case NOT_FOUND -> throw notFound(id);
            case OFFLINE -> throw new ApiProblem(ProblemType.DEVICE_OFFLINE, "device " + id + " is OFFLINE (no heartbeat lately): there is no agent"
                    + " to drain; a device that comes back registers as ONLINE and can be drained then");
            case DRAINING -> log.info("device {} DRAINING by {}", id, caller.name());
        }
        return devices.find(id).orElseThrow(() -> notFound(id));
    }

    private static ApiProblem notFound(String id) {
        return new ApiProblem(ProblemType.DEVICE_NOT_FOUND, "no device with id '" + id + "'");
    }
}
