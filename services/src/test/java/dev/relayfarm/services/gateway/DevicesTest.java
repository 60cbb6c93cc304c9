package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.services.TestJobs;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** The devices list and detail, drain (and its 404/409), and the sweeper that marks silent devices OFFLINE. */
class DevicesTest extends GatewayTestBase {
    @Autowired
    DeviceSweeper sweeper;

    @Test
    void listAndDetailShowWhatAgentsReportedWithTheRecentRate() {
        String cls = FarmRows.uniqueId("cpu-list");
        String a = FarmRows.uniqueId("dev-a"), b = FarmRows.uniqueId("dev-b");
        FarmRows.device(jdbc, a, cls, "ONLINE", 0);
        FarmRows.device(jdbc, b, cls, "DRAINING", 1);
        for (int i = 0; i < 10; i++) FarmRows.record(jdbc, "wl-" + a, cls, a, 10.0 + i, i, 1);
        FarmRows.record(jdbc, "wl-" + a, cls, a, null, 99, 2);
        FarmRows.record(jdbc, "wl-" + a, cls, a, 5.0, 100, 10);  // older than the 5-minute window

        HttpResponse<String> r = get("/api/v1/devices");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode mine = null;
        int ofClass = 0;
        for (JsonNode d : body(r).get("devices")) {
            if (!d.get("deviceClass").asText().equals(cls)) continue;
            ofClass++;
            if (d.get("id").asText().equals(a)) mine = d;
        }
        assertEquals(2, ofClass);
        assertEquals(body(r).get("devices").size(), body(r).get("count").asInt());
        assertEquals("ONLINE", mine.get("status").asText());
        assertEquals("host-1", mine.get("host").asText());
        assertEquals(3, mine.get("inFlight").asInt());
        assertEquals(42, mine.get("measured").asLong());
        assertEquals(11 / 5.0, mine.get("measurementsPerMinute").asDouble(), 1e-9, "11 records in the last 5 minutes");
        assertEquals(2, mine.get("failures").get("TIMEOUT").asInt());
        assertEquals("gcc 13.3.0", mine.get("compiler").asText());
        assertEquals(2, mine.get("capabilities").get("cores").asInt());
        Instant.parse(mine.get("lastHeartbeat").asText());

        JsonNode one = body(get("/api/v1/devices/" + b));
        assertEquals("DRAINING", one.get("status").asText());
        assertEquals(0.0, one.get("measurementsPerMinute").asDouble());
        assertProblem(get("/api/v1/devices/no-such-device"), 404, "no device with id 'no-such-device'");
    }

    @Test
    void drainSetsDrainingExceptForUnknownOrOfflineDevices() {
        String online = FarmRows.uniqueId("dev-drain"), offline = FarmRows.uniqueId("dev-off");
        FarmRows.device(jdbc, online, "cpu-drain", "ONLINE", 0);
        FarmRows.device(jdbc, offline, "cpu-drain", "OFFLINE", 0);
        HttpResponse<String> r = postJson(OPERATOR, "/api/v1/devices/" + online + "/drain", null);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("DRAINING", body(r).get("status").asText());
        assertEquals("DRAINING", jdbc.queryForObject("SELECT status FROM devices WHERE id = ?", String.class, online));
        assertEquals(200, postJson(OPERATOR, "/api/v1/devices/" + online + "/drain", null).statusCode(), "draining twice is a no-op");
        assertProblem(postJson(OPERATOR, "/api/v1/devices/" + offline + "/drain", null), 409, "device " + offline + " is OFFLINE");
        assertEquals("OFFLINE", jdbc.queryForObject("SELECT status FROM devices WHERE id = ?", String.class, offline));
        assertProblem(postJson(OPERATOR, "/api/v1/devices/nope/drain", null), 404, "no device with id 'nope'");
    }

    @Test
    void theSweeperMarksSilentDevicesOfflineAndLeavesBeatingOnesAlone() throws Exception {
        String silent = FarmRows.uniqueId("dev-silent"), draining = FarmRows.uniqueId("dev-silent-draining"), beating = FarmRows.uniqueId("dev-beating");
        FarmRows.device(jdbc, silent, "cpu-sweep", "ONLINE", 60);
        FarmRows.device(jdbc, draining, "cpu-sweep", "DRAINING", 16);
        FarmRows.device(jdbc, beating, "cpu-sweep", "ONLINE", 0);
        // the sweeper's own timer (relayfarm.farm.device-sweep, 2 s) finds them
        TestJobs.await(() -> "OFFLINE".equals(status(silent)) && "OFFLINE".equals(status(draining)), Duration.ofSeconds(10), "silent devices OFFLINE");
        assertEquals("ONLINE", status(beating));
        // a heartbeat older than relayfarm.farm.device-offline-after (15 s) is silence
        jdbc.update("UPDATE devices SET last_heartbeat = now() - interval '16 seconds' WHERE id = ?", beating);
        TestJobs.await(() -> "OFFLINE".equals(status(beating)), Duration.ofSeconds(10), "a device silent for 16 s OFFLINE");
        assertTrue(!sweeper.sweep().contains(beating), "an OFFLINE device is not marked again");
    }

    private String status(String id) {
        return jdbc.queryForObject("SELECT status FROM devices WHERE id = ?", String.class, id);
    }
}
