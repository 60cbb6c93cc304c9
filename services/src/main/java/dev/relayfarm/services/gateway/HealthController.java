package dev.relayfarm.services.gateway;

import dev.relayfarm.services.kit.ServiceRole;
import dev.relayfarm.services.kit.Stage;
import dev.relayfarm.services.kit.StageSettings;
import dev.relayfarm.services.store.StageConsumers;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/v1/health} (public, like the API description): whether the farm behind the gateway can make
 * progress. Per stage, the consumer threads every stage process reports to {@code stage_consumers} (see
 * {@link dev.relayfarm.services.kit.StageRunners}): UP when all recent ones are alive, DEGRADED when some died (their
 * watchdog restarts them), DOWN when none is alive or none reported lately — then jobs stay QUEUED however many are
 * accepted. The answer is 503 when any stage is DOWN, so a load balancer or a script can tell without reading it.
 *
 * <p>Without a token the answer is only the overall and per-stage status (with the reason in words, which names no job
 * and no error); each consumer thread's details (busy job, last error, restarts) need a valid bearer token.
 */
@RestController
@ServiceRole(Stage.GATEWAY)
public class HealthController {
    private final StageConsumers consumers;
    private final Duration recent;

    private final GatewayToken token;

    public HealthController(StageConsumers consumers, StageSettings settings, GatewayToken token) {
        this.consumers = consumers;
        this.token = token;
        // three missed watchdog rounds (at least 5 s) and a process counts as gone
        this.recent = max(settings.watchdogInterval().multipliedBy(3), Duration.ofSeconds(5));
    }

    @GetMapping("/api/v1/health")
    ResponseEntity<Map<String, Object>> health(@RequestHeader(value = HttpHeaders.AUTHORIZATION, required = false) String authorization) {
        // public for load balancers; the details only for a caller with the token (an invalid one gets the public view)
        boolean details = authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7) && token.matches(authorization.substring(7).trim());
        List<StageConsumers.Row> rows = consumers.recent(recent);
        Map<String, Object> stages = new LinkedHashMap<>();
        String overall = "UP";
        for (Stage stage : Stage.values()) {
            List<StageConsumers.Row> mine = rows.stream().filter(r -> r.stage().equals(stage.wireName)).toList();
            long alive = mine.stream().filter(StageConsumers.Row::alive).count();
            String status;
            String reason;
            if (mine.isEmpty()) {
                status = "DOWN";
                reason = "no " + stage.serviceName() + " consumer reported in the last " + recent.toSeconds() + " s: is the " + stage.serviceName() + " service running?";
            } else if (alive == 0) {
                status = "DOWN";
                reason = "every " + stage.serviceName() + " consumer thread is dead (" + mine.size() + ")";
            } else if (alive < mine.size()) {
                status = "DEGRADED";
                reason = (mine.size() - alive) + " of " + mine.size() + " " + stage.serviceName() + " consumer threads are dead";
            } else {
                status = "UP";
                reason = null;
            }
            if (status.equals("DOWN")) overall = "DOWN";
            else if (status.equals("DEGRADED") && overall.equals("UP")) overall = "DEGRADED";
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("status", status);
            if (reason != null) s.put("reason", reason);
            if (details) s.put("consumers", mine.stream().map(HealthController::consumer).toList());
            stages.put(stage.wireName, s);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", overall);
        body.put("stages", stages);
        return ResponseEntity.status(overall.equals("DOWN") ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.OK).body(body);
    }

    private static Map<String, Object> consumer(StageConsumers.Row r) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("id", r.id());
        c.put("alive", r.alive());
        c.put("restarts", r.restarts());
        c.put("busyJob", r.busyJob());
        c.put("lastError", r.lastError());
        c.put("lastErrorAt", r.lastErrorAt());
        c.put("heartbeatAt", r.heartbeatAt());
        return c;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
