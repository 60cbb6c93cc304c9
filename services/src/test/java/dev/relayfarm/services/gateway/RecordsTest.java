package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.tuning.Device;
import dev.relayfarm.tuning.MeasureError;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.tuning.record.TuningRecord;
import java.net.http.HttpResponse;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Records in and out as the library's JSON Lines: import (duplicates skipped, a bad line refusing all), export back equal. */
class RecordsTest extends GatewayTestBase {
    static final Device DEVICE = new Device("cpu-x86_64-avx2-2c-test", "x86_64", "Test CPU", List.of("avx2", "avx", "fma"), 2);

    static List<TuningRecord> records(String workload) {
        Instant at = Instant.parse("2025-03-01T10:00:00.123456Z");
        ScheduleConfig c8 = new ScheduleConfig("dense_pack.x86", Map.of("tile_x", 8));
        ScheduleConfig c16 = new ScheduleConfig("dense_pack.x86", Map.of("tile_x", 16));
        return List.of(
                new TuningRecord(workload, c8, "c -mcpu=native", DEVICE, "gcc 13.3.0", "0.1.0", new Measurement.Cost(12.5, 0.013, 200, 5),
                        OptionalDouble.of(15.25), at),
                new TuningRecord(workload, c16, "c -mcpu=native", DEVICE, "gcc 13.3.0", "0.1.0", new Measurement.Cost(14.0, Double.NaN, 100, 3),
                        OptionalDouble.empty(), at.plus(1, ChronoUnit.SECONDS)),
                new TuningRecord(workload, c16, "c -mcpu=native", DEVICE, "gcc 13.3.0", "0.1.0",
                        new Measurement.Failure(MeasureError.TIMEOUT, "killed after 10 s"), OptionalDouble.of(15.0), at.plus(2, ChronoUnit.SECONDS)));
    }

    static String jsonLines(List<TuningRecord> records) {
        return records.stream().map(TuningRecord::toJson).collect(Collectors.joining("\n", "", "\n"));
    }

    HttpResponse<String> importLines(String token, String body) {
        return send(as(token, "/api/v1/records/import").header("Content-Type", "application/x-ndjson")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build());
    }

    @Test
    void importedRecordsExportEqualAndDuplicatesAreSkipped() throws Exception {
        String workload = FarmRows.uniqueId("dense[1x784,128x784]");
        List<TuningRecord> mine = records(workload);
        HttpResponse<String> r = importLines(OPERATOR, jsonLines(mine) + "\n\n");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(3, body(r).get("imported").asInt());
        assertEquals(0, body(r).get("skipped").asInt());
        Map<String, Object> row = jdbc.queryForMap("SELECT * FROM tuning_records WHERE workload_key = ? AND error IS NULL ORDER BY measured_at LIMIT 1", workload);
        assertEquals("dense_pack.x86", row.get("template"));
        assertEquals(DEVICE.deviceClass(), row.get("device_class"));
        assertEquals(15.25, row.get("default_cost_us"));
        assertEquals(200, row.get("number"));

        // the same file again, and a file repeating one record: nothing new
        HttpResponse<String> again = importLines(OPERATOR, jsonLines(mine));
        assertEquals(Map.of("imported", 0, "skipped", 3), json.convertValue(body(again), Map.class));
        HttpResponse<String> twice = importLines(TOKEN, jsonLines(List.of(mine.get(0), mine.get(0))));
        assertEquals(Map.of("imported", 0, "skipped", 2), json.convertValue(body(twice), Map.class));
        assertEquals(3, jdbc.queryForObject("SELECT count(*) FROM tuning_records WHERE workload_key = ?", Integer.class, workload));

        HttpResponse<String> export = get("/api/v1/records/export?workload=" + URLEncoder.encode(workload, StandardCharsets.UTF_8)
                + "&deviceClass=" + DEVICE.deviceClass() + "&target=c%20-mcpu%3Dnative");
        assertEquals(200, export.statusCode(), export.body());
        assertTrue(export.headers().firstValue("Content-Type").orElse("").startsWith("application/x-ndjson"));
        List<TuningRecord> back = new ArrayList<>();
        for (String line : export.body().split("\n")) back.add(TuningRecord.fromJson(line));
        assertEquals(mine, back, "what goes in comes out, in the library's format");
        assertEquals(jsonLines(mine), export.body());
        assertEquals("", get("/api/v1/records/export?workload=" + URLEncoder.encode(workload, StandardCharsets.UTF_8) + "&deviceClass=gpu-none").body());
    }

    @Test
    void aBadLineIsA400NamingItAndNothingIsImported() throws Exception {
        String workload = FarmRows.uniqueId("dense-bad");
        List<TuningRecord> mine = records(workload);
        String body = mine.get(0).toJson() + "\n\n" + mine.get(1).toJson() + "\n" + mine.get(2).toJson().replace("\"TIMEOUT\"", "\"SLOW\"") + "\n";
        JsonNode p = assertProblem(importLines(OPERATOR, body), 400,
                "line 4: \"error\" must be COMPILE_ERROR, RUNTIME_ERROR, WRONG_ANSWER or TIMEOUT, got \"SLOW\"; nothing was imported");
        assertEquals(4, p.get("line").asInt());
        assertEquals("/api/v1/docs#problem-bad-records", p.get("type").asText());
        assertProblem(importLines(OPERATOR, mine.get(0).toJson() + "\nnot json\n"), 400, "line 2: not JSON");
        assertEquals(0, jdbc.queryForObject("SELECT count(*) FROM tuning_records WHERE workload_key = ?", Integer.class, workload));
        assertProblem(importLines(REVIEWER, mine.get(0).toJson()), 403, "needs the 'operator' role");
    }
}
