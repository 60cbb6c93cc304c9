package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.kernel.codegen.CCompiler;
import java.io.File;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The tuning farm end to end (issue 16): a tuner worker beside the farm and two hardware agents as processes of their
 * own ({@code FarmCommand agent}, separate JVMs). A job with {@code tune=budget=...} makes the autotuner stage put
 * its workloads on the farm; one agent is SIGKILLed while it measures. Its request goes to the other agent (the
 * Kafka group's rebalance), every trial is in {@code tuning_records} exactly once, the killed device shows OFFLINE,
 * and the job completes with the tuned configs applied. The worker's proposals are then approved over REST and a
 * second job of the model applies them as stored schedules.
 */
@ExtendWith(E2eFarmExtension.class)
class TuningFarmTest {
    @Test
    void twoAgentsOneKilledEveryTrialOnceJobCompletesSchedulesApply(E2eFarm farm) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "skipped: no C compiler, agents cannot measure");
        ConfigurableApplicationContext worker = farm.farm.startServices("tuner-worker", 0, Map.of("relayfarm.tuner.concurrency", "2"));
        Process a1 = agent(farm, "a1"), a2 = agent(farm, "a2");
        try {
            awaitTrue(() -> count(farm, "SELECT count(*) FROM devices WHERE status = 'ONLINE' AND id LIKE '%/a_'") == 2, Duration.ofSeconds(90),
                    "two agents ONLINE");
            String deviceA1 = text(farm, "SELECT id FROM devices WHERE id LIKE '%/a1'");

            String job = farm.client.submit(Path.of("../examples/mlp.relay"), Map.of("opt_level", "3", "tune", "budget=120s"));
            // kill a1 while it measures a batch (in flight), so that batch is the one redelivered
            awaitTrue(() -> count(farm, "SELECT count(*) FROM devices WHERE id = '" + deviceA1 + "' AND in_flight > 0") == 1, Duration.ofSeconds(120),
                    "agent a1 measuring");
            long killedAt = System.currentTimeMillis();
            a1.destroyForcibly(); // SIGKILL
            a1.waitFor(10, TimeUnit.SECONDS);
            System.out.println("SIGKILLed agent a1 (pid " + a1.pid() + ") mid-measurement");

            JsonNode done = farm.client.await(job, Duration.ofMinutes(5), j -> {});
            assertEquals("SUCCEEDED", done.path("status").asText(), done.toString());
            awaitTrue(() -> "OFFLINE".equals(text(farm, "SELECT status FROM devices WHERE id = '" + deviceA1 + "'")), Duration.ofSeconds(60),
                    "the killed agent's device OFFLINE");

            long duplicates = count(farm, "SELECT count(*) FROM (SELECT request_id, position FROM tuning_records WHERE request_id IS NOT NULL "
                    + "GROUP BY 1, 2 HAVING count(*) > 1) d");
            assertEquals(0, duplicates, "a trial recorded twice");
            long afterKillByA2 = count(farm, "SELECT count(*) FROM tuning_records WHERE device_id LIKE '%/a2' AND measured_at > to_timestamp(" + killedAt / 1000.0 + ")");
            assertTrue(afterKillByA2 > 0, "a2 measured after a1 was killed");
            // the request a1 held was measured by a2 (else its task would wait and fail): every task of the run ended DONE
            assertEquals(0, count(farm, "SELECT count(*) FROM tuning_tasks t JOIN tuning_run_tasks rt ON rt.task_id = t.id JOIN tuning_runs u ON u.id = rt.run_id "
                    + "WHERE u.job_id = '" + job + "' AND t.status <> 'DONE'"), rows(farm, "SELECT id || ' ' || status || ' ' || coalesce(note, '') FROM tuning_tasks"));
            long trials = count(farm, "SELECT count(*) FROM tuning_records r JOIN tuning_run_tasks rt ON rt.task_id = r.task_id "
                    + "JOIN tuning_runs u ON u.id = rt.run_id WHERE u.job_id = '" + job + "'");
            System.out.printf("tuning run of job %s: %d records, %d by a2 after the kill; per device: %s%n", job, trials, afterKillByA2,
                    rows(farm, "SELECT device_id || ': ' || count(*) FROM tuning_records GROUP BY device_id"));

            // the worker proposed what beat the default; a reviewer approves; the next job applies them as stored schedules
            List<String> pending = rows(farm, "SELECT id::text FROM schedules WHERE status = 'PENDING'");
            for (String id : pending) post(farm, "/api/v1/schedules/" + id + "/approve", "{\"note\": \"e2e\"}");
            String second = farm.client.submit(Path.of("../examples/mlp.relay"), Map.of("opt_level", "3"));
            JsonNode secondDone = farm.await(second);
            assertEquals("SUCCEEDED", secondDone.path("status").asText(), secondDone.toString());
            long stored = count(farm, "SELECT count(*) FROM stage_results, jsonb_array_elements(output -> 'payload' -> 'schedules') s "
                    + "WHERE job_id = '" + second + "' AND stage = 'tune' AND s ->> 'source' = 'stored'");
            assertEquals(pending.size(), stored, "every approved schedule applied by the second job");
            System.out.printf("approved %d schedules; the second job applied %d%n", pending.size(), stored);
        } finally {
            a1.destroyForcibly();
            a2.destroy();
            a2.waitFor(30, TimeUnit.SECONDS);
            a2.destroyForcibly();
            worker.close();
        }
    }

    private static Process agent(E2eFarm farm, String name) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                "dev.relayfarm.infra.FarmCommand", "agent", "--bootstrap", farm.farm.bootstrapServers(), "--db", farm.farm.jdbcUrl(), "--name", name,
                "--fast", "--log-dir", farm.work.toString()));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(new File(farm.work.toFile(), "agent-" + name + ".out")).start();
    }

    private static void post(E2eFarm farm, String path, String json) throws Exception {
        var req = java.net.http.HttpRequest.newBuilder(java.net.URI.create(farm.farm.gatewayUrl() + path))
                .header("Authorization", "Bearer " + farm.farm.token()).header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(json)).build();
        var res = java.net.http.HttpClient.newHttpClient().send(req, java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(200, res.statusCode(), path + ": " + res.body());
    }

    private static long count(E2eFarm farm, String sql) {
        return Long.parseLong(text(farm, sql));
    }

    private static String text(E2eFarm farm, String sql) {
        List<String> r = rows(farm, sql);
        return r.isEmpty() ? null : r.getFirst();
    }

    private static List<String> rows(E2eFarm farm, String sql) {
        try (Connection c = farm.db(); PreparedStatement q = c.prepareStatement(sql); ResultSet rs = q.executeQuery()) {
            List<String> out = new ArrayList<>();
            while (rs.next()) out.add(rs.getString(1));
            return out;
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
            Thread.sleep(200);
        }
    }
}
