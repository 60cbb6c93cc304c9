package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.store.DeviceRow;
import dev.relayfarm.services.store.Devices;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
    private final Devices devices;
    private final FarmOperations operations;

    public DevicesController(Devices devices, FarmOperations operations) {
        this.devices = devices;
        this.operations = operations;
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
        operations.drain(id, caller);
        return devices.find(id).orElseThrow(() -> notFound(id));
    }

    private static ApiProblem notFound(String id) {
        return FarmOperations.deviceNotFound(id);
    }
}
