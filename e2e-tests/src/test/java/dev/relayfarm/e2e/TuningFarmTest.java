package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.bench.BenchInputs;
import dev.relayfarm.bench.CompiledRunner;
import dev.relayfarm.bench.SideBySide;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.runtime.CompiledModel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The tuning farm end to end (issue 16), with tuner workers and hardware agents as processes of their own
 * ({@code FarmCommand agent|worker}: separate JVMs, killed with SIGKILL).
 */
@ExtendWith(E2eFarmExtension.class)
class TuningFarmTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The tuning jobs' budget: short in CI; {@code -Drelayfarm.e2e.tune-budget=5m} shows what a longer one gains. */
    private static final String BUDGET = System.getProperty("relayfarm.e2e.tune-budget", "90s");

    /** What the test tunes: the two models when the shared data is there, else the example MLP. */
    private record Model(String name, Path file, String shapes) {}

    private static List<Model> models() {
        List<Model> out = new ArrayList<>();
        OnnxTestData.models().map(m -> m.resolve("ppocr_cls_mobilenetv3/model.onnx")).filter(Files::isRegularFile)
                .ifPresent(p -> out.add(new Model("ppocr_cls_mobilenetv3", p, "x=1x3x48x192")));
        OnnxTestData.light().map(l -> l.resolve("light_resnet50.onnx")).filter(Files::isRegularFile).ifPresent(p -> out.add(new Model("resnet50", p, "")));
        if (out.isEmpty()) out.add(new Model("mlp", Path.of("../examples/mlp.relay"), ""));
        return out;
    }

    /**
     * Jobs with {@code tune=budget=...} put their workloads on the farm (one worker, two agent JVMs); one agent is
     * SIGKILLed while it measures: its request goes to the other agent (the Kafka group's rebalance), every trial is in
     * {@code tuning_records} once, the killed device shows OFFLINE, and the jobs complete. A submitter cannot approve
     * the proposed schedules (403), a reviewer can; a second job of each model applies them (the manifest's kernels say
     * {@code tuned}) and runs faster than the model compiled with {@code tune=off} (ratio printed).
     */
    @Test
    void twoAgentsOneKilledEveryTrialOnceJobsCompleteApprovedSchedulesApply(E2eFarm farm) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "skipped: no C compiler, agents cannot measure");
        ConfigurableApplicationContext worker = farm.farm.startServices("tuner-worker", 0, Map.of("relayfarm.tuner.concurrency", "2"));
        Process a1 = agent(farm, "a1"), a2 = agent(farm, "a2");
        try {
            awaitTrue(() -> count(farm, "SELECT count(*) FROM devices WHERE status = 'ONLINE' AND id LIKE '%/a_'") == 2, Duration.ofSeconds(90),
                    "two agents ONLINE");
            String deviceA1 = text(farm, "SELECT id FROM devices WHERE id LIKE '%/a1'");
            Map<Model, String> jobs = new LinkedHashMap<>();
            for (Model m : models()) jobs.put(m, submit(farm, m, "budget=" + BUDGET));

            awaitTrue(() -> count(farm, "SELECT count(*) FROM devices WHERE id = '" + deviceA1 + "' AND in_flight > 0") == 1, Duration.ofSeconds(180),
                    "agent a1 measuring");
            String held = text(farm, "SELECT in_flight_request::text FROM devices WHERE id = '" + deviceA1 + "'");
            long killedAt = System.currentTimeMillis();
            a1.destroyForcibly(); // SIGKILL
            a1.waitFor(10, TimeUnit.SECONDS);
            System.out.println("SIGKILLed agent a1 (pid " + a1.pid() + ") while it measured request " + held);

            for (var e : jobs.entrySet()) {
                JsonNode done = farm.client.await(e.getValue(), Duration.ofMinutes(10), j -> {});
                assertEquals("SUCCEEDED", done.path("status").asText(), e.getKey().name() + ": " + done);
            }
            awaitTrue(() -> "OFFLINE".equals(text(farm, "SELECT status FROM devices WHERE id = '" + deviceA1 + "'")), Duration.ofSeconds(60),
                    "the killed agent's device OFFLINE");
            // the request a1 held was measured by a2, once: its records are a2's, positions 0..n without a gap or a repeat
            assertTrue(held != null, "a1 named the request it measured");
            assertTrue(count(farm, "SELECT count(*) FROM tuning_records WHERE request_id = '" + held + "' AND device_id LIKE '%/a2'") > 0, "a2 measured a1's request");
            assertEquals(0, count(farm, "SELECT count(*) FROM tuning_records WHERE request_id = '" + held + "' AND device_id NOT LIKE '%/a2'"), "only a2 did");
            assertEquals(0, count(farm, "SELECT count(*) FROM (SELECT request_id FROM tuning_records WHERE request_id IS NOT NULL GROUP BY request_id "
                    + "HAVING count(*) <> max(position) + 1 OR count(DISTINCT position) <> count(*)) d"), "a request's records with a gap or a repeat");
            // every trial once: within a task a config is measured once, the best one a second time to confirm it (the last request)
            assertEquals(0, count(farm, "SELECT count(*) FROM (SELECT task_id, config FROM tuning_records WHERE position > 0 GROUP BY 1, 2 HAVING count(*) > 2) d"));
            assertTrue(count(farm, "SELECT count(*) FROM (SELECT task_id FROM (SELECT task_id, config FROM tuning_records WHERE position > 0 "
                    + "GROUP BY 1, 2 HAVING count(*) = 2) twice GROUP BY task_id HAVING count(*) > 1) d") == 0, "more than one config repeated in a task");
            long byA2AfterKill = count(farm, "SELECT count(*) FROM tuning_records WHERE device_id LIKE '%/a2' AND measured_at > to_timestamp(" + killedAt / 1000.0 + ")");
            assertTrue(byA2AfterKill > 0, "a2 measured after a1 was killed");
            // the request a1 held was answered by a2, else its task would have failed waiting: no task of the runs FAILED
            assertEquals(0, count(farm, "SELECT count(*) FROM tuning_tasks WHERE status = 'FAILED'"),
                    rows(farm, "SELECT id || ' ' || status || ' ' || coalesce(note, '') FROM tuning_tasks WHERE status = 'FAILED'").toString());
            System.out.printf("records per device: %s; by a2 after the kill: %d; tasks: %s%n",
                    rows(farm, "SELECT device_id || ' ' || count(*) FROM tuning_records GROUP BY device_id"), byA2AfterKill,
                    rows(farm, "SELECT status || ' ' || count(*) FROM tuning_tasks GROUP BY status"));

            List<String> pending = rows(farm, "SELECT id::text FROM schedules WHERE status = 'PENDING' ORDER BY id");
            assumeTrue(!pending.isEmpty(), "the budget found nothing faster than the defaults: no schedule to review");
            assertEquals(403, post(farm, "/api/v1/schedules/" + pending.getFirst() + "/approve", "{\"note\": \"e2e\"}", E2eFarm.SUBMITTER_TOKEN),
                    "a submitter approving");
            for (String id : pending) assertEquals(200, post(farm, "/api/v1/schedules/" + id + "/approve", "{\"note\": \"e2e\"}", E2eFarm.REVIEWER_TOKEN));
            assertEquals(pending.size(), count(farm, "SELECT count(*) FROM schedules WHERE status = 'APPROVED' AND reviewer = 'reviewer1'"));

            // timing wants a quiet machine: the farm's tuning stops first (SIGTERM: a2 drains its batch, the worker its round)
            a2.destroy();
            a2.waitFor(60, TimeUnit.SECONDS);
            worker.close();
            for (Model m : jobs.keySet()) {
                String tuned = submit(farm, m, "apply"), untuned = submit(farm, m, "off");
                JsonNode t = farm.await(tuned), u = farm.await(untuned);
                assertEquals("SUCCEEDED", t.path("status").asText(), t.toString());
                assertEquals("SUCCEEDED", u.path("status").asText(), u.toString());
                Path tunedDir = farm.client.downloadArtifact(tuned, farm.work.resolve("tuned-" + tuned));
                Path untunedDir = farm.client.downloadArtifact(untuned, farm.work.resolve("untuned-" + untuned));
                int tunedKernels = 0;
                for (JsonNode k : JSON.readTree(Files.readString(tunedDir.resolve("manifest.json"))).path("kernels")) {
                    if (k.path("source").asText().equals("tuned")) tunedKernels++;
                }
                long applied = count(farm, "SELECT count(*) FROM stage_results, jsonb_array_elements(output -> 'payload' -> 'schedules') s "
                        + "WHERE job_id = '" + tuned + "' AND stage = 'tune' AND s ->> 'source' = 'stored'");
                if (applied == 0) {
                    System.out.printf("%s: no approved schedule for its workloads (nothing beat the defaults in the budget)%n", m.name());
                    continue;
                }
                assertTrue(tunedKernels > 0, m.name() + ": the manifest lists no tuned kernel though " + applied + " schedules were applied");
                double ratio = tunedOverUntuned(m, tunedDir, untunedDir, 30);
                if (ratio >= 1.05) {
                    // 30 runs beside a live farm (broker, database, agents) can land on a noisy stretch: a suspect
                    // ratio is measured again, longer, before it fails the test
                    System.out.printf(Locale.ROOT, "%s: tuned/untuned %.3f over 30 runs; measuring again over 150%n", m.name(), ratio);
                    ratio = tunedOverUntuned(m, tunedDir, untunedDir, 150);
                }
                System.out.printf(Locale.ROOT, "%s: approved schedules %s%n", m.name(), rows(farm, "SELECT workload_key || ' ' || round((default_cost_us / cost_us)::numeric, 3) "
                        + "|| 'x' FROM schedules WHERE status = 'APPROVED' AND id IN (SELECT (s ->> 'scheduleId')::bigint FROM stage_results, "
                        + "jsonb_array_elements(output -> 'payload' -> 'schedules') s WHERE job_id = '" + tuned + "' AND stage = 'tune' AND s ->> 'source' = 'stored')"));
                System.out.printf(Locale.ROOT, "%s: %d approved schedules applied (%d kernels tuned); tuned/untuned latency %.3f%n", m.name(), applied,
                        tunedKernels, ratio);
                assertTrue(ratio < 1.05, m.name() + ": the tuned artifact is slower than untuned: " + ratio);
            }
        } finally {
            a1.destroyForcibly();
            a2.destroy();
            a2.waitFor(30, TimeUnit.SECONDS);
            a2.destroyForcibly();
            worker.close();
        }
    }

    /**
     * A tuner worker (its own JVM) SIGKILLed in the middle of a task: the task's message goes to another worker once the
     * group's session expires, which resumes it from its records: the task ends DONE after two attempts and no config
     * was measured twice.
     */
    @Test
    void aKilledWorkersTaskResumesElsewhereWithoutRepeatingTrials(E2eFarm farm) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "skipped: no C compiler, agents cannot measure");
        ConfigurableApplicationContext agent = farm.farm.startServices("hardware-agent", 0, Map.of("relayfarm.agent.name", "resume", "relayfarm.agent.fast", "true"));
        Process w1 = worker(farm, "w1");
        ConfigurableApplicationContext w2 = null;
        try {
            // a workload no other test tunes: its own shapes
            String relay = """
                    #[version = "0.0.5"]
                    def @main(%x: Tensor[(3, 96), float32], %w: Tensor[(40, 96), float32]) {
                      nn.relu(nn.dense(%x, %w))
                    }
                    """;
            String job = farm.client.submit("resume.relay", relay.getBytes(StandardCharsets.UTF_8), Map.of("opt_level", "3", "tune", "budget=180s"));
            awaitTrue(() -> count(farm, "SELECT count(*) FROM tuning_tasks t JOIN tuning_runs u ON u.job_id = t.job_id WHERE u.job_id = '" + job
                    + "' AND t.status = 'RUNNING' AND t.trials >= 8") > 0, Duration.ofSeconds(120), "w1 has measured rounds of the task");
            String task = text(farm, "SELECT t.id::text FROM tuning_tasks t WHERE t.job_id = '" + job + "' AND t.status = 'RUNNING' ORDER BY t.trials DESC LIMIT 1");
            long before = count(farm, "SELECT count(*) FROM tuning_records WHERE task_id = " + task + " AND position > 0");
            w1.destroyForcibly(); // SIGKILL
            w1.waitFor(10, TimeUnit.SECONDS);
            System.out.println("SIGKILLed worker w1 (pid " + w1.pid() + ") with " + before + " trials of task " + task + " recorded");
            w2 = farm.farm.startServices("tuner-worker", 0, Map.of("relayfarm.tuner.concurrency", "1"));

            JsonNode done = farm.client.await(job, Duration.ofMinutes(6), j -> {});
            assertEquals("SUCCEEDED", done.path("status").asText(), done.toString());
            Map<String, String> row = Map.of("status", text(farm, "SELECT status FROM tuning_tasks WHERE id = " + task),
                    "attempts", text(farm, "SELECT attempts::text FROM tuning_tasks WHERE id = " + task),
                    "note", String.valueOf(text(farm, "SELECT note FROM tuning_tasks WHERE id = " + task)));
            assertEquals("DONE", row.get("status"), row.toString());
            assertEquals("2", row.get("attempts"), "claimed by w1, then resumed by the second worker: " + row);
            long after = count(farm, "SELECT count(*) FROM tuning_records WHERE task_id = " + task + " AND position > 0");
            assertTrue(after > before, "the second worker measured more: " + before + " -> " + after);
            // a config is measured once; only the best may be measured a second time, to confirm it, at the very end
            assertTrue(count(farm, "SELECT count(*) FROM (SELECT config FROM tuning_records WHERE task_id = " + task
                    + " AND position > 0 GROUP BY config HAVING count(*) > 1) d") <= (row.get("note").contains("measured again") || row.get("note").contains("proposed") ? 1 : 0),
                    "a config measured twice: " + row);
            System.out.printf("task %s: %d trials before the kill, %d in all, %s%n", task, before, after, row);
        } finally {
            w1.destroyForcibly();
            if (w2 != null) w2.close();
            agent.close();
        }
    }

    private static String submit(E2eFarm farm, Model m, String tune) throws Exception {
        Map<String, String> fields = new LinkedHashMap<>(Map.of("opt_level", "3", "tune", tune));
        if (!m.shapes().isEmpty()) fields.put("shapes", m.shapes());
        return farm.client.submit(m.file(), fields);
    }

    /** Tuned/untuned median latency, the two artifacts alternating in this process (1 thread each). */
    private static double tunedOverUntuned(Model m, Path tunedDir, Path untunedDir, int runs) {
        Map<String, List<Long>> bound = new LinkedHashMap<>();
        if (!m.shapes().isEmpty()) for (String s : m.shapes().split(",")) {
            String[] kv = s.split("=");
            bound.put(kv[0], java.util.Arrays.stream(kv[1].split("x")).map(Long::parseLong).toList());
        }
        if (m.file().toString().endsWith(".relay")) return 1.0; // no ONNX inputs to feed: the example only shows the schedules applied
        BenchInputs in = BenchInputs.load(m.file(), bound, 7);
        try (CompiledRunner tuned = new CompiledRunner(CompiledModel.load(tunedDir), 1, "tuned");
             CompiledRunner untuned = new CompiledRunner(CompiledModel.load(untunedDir), 1, "untuned")) {
            double[][] ms = SideBySide.alternate(List.of(tuned, untuned), in.values(), 5, runs);
            return SideBySide.percentile(ms[0], 0.5) / SideBySide.percentile(ms[1], 0.5);
        }
    }

    private static Process agent(E2eFarm farm, String name) throws Exception {
        // full measurements (not --fast): what these agents measure becomes schedules the test applies and times
        return farm.startFarmProcess("agent", name, "--name", name);
    }

    private static Process worker(E2eFarm farm, String name) throws Exception {
        return farm.startFarmProcess("worker", name, "--set", "relayfarm.tuner.concurrency=1");
    }

    private static int post(E2eFarm farm, String path, String json, String token) throws Exception {
        var req = java.net.http.HttpRequest.newBuilder(java.net.URI.create(farm.farm.gatewayUrl() + path))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(json)).build();
        return java.net.http.HttpClient.newHttpClient().send(req, java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    private static long count(E2eFarm farm, String sql) {
        return Long.parseLong(farm.text(sql));
    }

    private static String text(E2eFarm farm, String sql) {
        return farm.text(sql);
    }

    private static List<String> rows(E2eFarm farm, String sql) {
        return farm.rows(sql);
    }

    private static void awaitTrue(BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
            Thread.sleep(200);
        }
    }
}
