package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.services.TopicReader;
import dev.relayfarm.services.kit.Envelopes;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.services.store.JobStore;
import dev.relayfarm.services.store.TuningRuns;
import dev.relayfarm.tuning.TuningTask;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * Tuning runs from a job past the optimizer: the tasks created, their tuning.tasks messages, a second run joining the
 * same tasks, cancel, status and progress as workers move the tasks, the event stream, and every refusal.
 *
 * <p>The job's optimized module is made here with the library calls the importer, type-inference and optimizer stages
 * make, and stored as the optimizer stage stores it (IrStore, stage_results): this context runs only the gateway role,
 * and a context running the stages would consume every other gateway test's compile.requested.
 */
class TuningRunsTest extends GatewayTestBase {
    static final Path MLP = Path.of("..", "examples", "mlp.relay");
    static final String TARGET = "c -mcpu=native";

    @Autowired
    IrStore ir;
    @Autowired
    TuningRuns runs;

    /** A job SUCCEEDED through the pipeline's stages; its optimized module's workload keys, in {@link #optimized}'s order. */
    record OptimizedJob(UUID id, IRModule optimized, List<String> workloads) {}

    OptimizedJob optimizedJob() throws Exception {
        byte[] model = Files.readAllBytes(MLP);
        HttpResponse<String> r = submit(new Form().file("model", "mlp.relay", model).field("target", TARGET));
        assertEquals(201, r.statusCode(), r.body());
        UUID id = UUID.fromString(body(r).get("id").asText());
        Target target = Target.parse(TARGET);
        IRModule imported = dev.relayfarm.pipeline.Stages.importModel(ModelSource.read(MLP), "");
        IRModule optimized = dev.relayfarm.pipeline.Stages.optimize(dev.relayfarm.pipeline.Stages.inferTypes(imported), 3, target);
        String irRef = ir.write(optimized);
        Stages.started(jdbc, id, "import", "IMPORTING");
        Stages.finished(jdbc, id, "import", "IMPORTING", 5, 1);
        Stages.started(jdbc, id, "infer", "TYPING");
        Stages.finished(jdbc, id, "infer", "TYPING", 5, 1);
        Stages.started(jdbc, id, "optimize", "OPTIMIZING");
        // the optimizer's stored result is the envelope it sent: its irRef names the optimized module
        var envelope = Envelopes.MAPPER.createObjectNode().put("jobId", id.toString()).put("stage", "optimize").put("irRef", irRef);
        new JobStore(jdbc, Envelopes.MAPPER).storeStageResult(id, "optimize", envelope, 1, Instant.now(), 5);
        Stages.succeed(jdbc, id, new byte[] {1, 2, 3}, "mlp-artifact");
        List<String> keys = dev.relayfarm.pipeline.Stages.tasks(optimized, target).stream().map(TuningTask::key).distinct().toList();
        assertTrue(keys.size() >= 2, "mlp has two dense workloads at least: " + keys);
        return new OptimizedJob(id, optimized, keys);
    }

    /** A device class of its own (a registered device), so no other test's live tasks are joined. */
    String deviceClass() {
        String cls = FarmRows.uniqueId("cpu-tune");
        FarmRows.device(jdbc, FarmRows.uniqueId("dev-tune"), cls, "ONLINE", 0);
        return cls;
    }

    HttpResponse<String> createRun(String token, UUID job, String cls, String extra) {
        return postJson(token, "/api/v1/tuning-runs", "{\"jobId\": \"" + job + "\", \"deviceClass\": \"" + cls + "\"" + extra + "}");
    }

    @Test
    void aRunCreatesTasksAndAnnouncesThemASecondRunJoinsThemAndCancelKeepsWhatOthersNeed() throws Exception {
        OptimizedJob job = optimizedJob();
        String cls = deviceClass();
        HttpResponse<String> first = createRun(OPERATOR, job.id(), cls, ", \"budget\": \"5m\", \"strategy\": \"ga\", \"trialsPerTask\": 16");
        assertEquals(201, first.statusCode(), first.body());
        JsonNode run1 = body(first);
        long id1 = run1.get("id").asLong();
        assertEquals(uri("/api/v1/tuning-runs/" + id1).toString(), first.headers().firstValue("Location").orElseThrow());
        assertEquals("RUNNING", run1.get("status").asText());
        assertEquals("otto", run1.get("createdBy").asText());
        assertEquals(TARGET, run1.get("target").asText());
        assertEquals(300_000, run1.get("budgetMs").asLong());
        assertEquals(0.0, run1.get("progress").asDouble());
        List<Long> created = longs(run1.get("createdTaskIds"));
        assertEquals(job.workloads().size(), created.size());
        assertEquals(List.of(), longs(run1.get("joinedTaskIds")));
        Set<String> workloads = new TreeSet<>();
        for (JsonNode t : run1.get("tasks")) {
            workloads.add(t.get("workload").asText());
            assertEquals("PENDING", t.get("status").asText());
            assertEquals(16, t.get("trialsBudget").asInt());
            assertEquals("ga", t.get("strategy").asText());
        }
        assertEquals(new TreeSet<>(job.workloads()), workloads, "one task per workload of the optimized module");
        Map<String, Integer> calls = dev.relayfarm.tuning.scheduler.Tuner.callsPerWorkload(job.optimized(),
                dev.relayfarm.pipeline.Stages.tasks(job.optimized(), Target.parse(TARGET)));
        for (Long task : created) {
            Map<String, Object> row = jdbc.queryForMap("SELECT * FROM tuning_tasks WHERE id = ?", task);
            assertEquals("PENDING", row.get("status"));
            assertEquals(cls, row.get("device_class"));
            assertEquals(job.id(), row.get("job_id"));
            assertEquals(8, row.get("batch"));
            assertEquals(calls.get((String) row.get("workload_key")), row.get("calls"));
            assertEquals(jdbc.queryForObject("SELECT ir_ref FROM tuning_runs WHERE id = ?", String.class, id1), row.get("ir_ref"));
            long deadlineIn = ((java.sql.Timestamp) row.get("deadline")).toInstant().getEpochSecond() - Instant.now().getEpochSecond();
            assertTrue(deadlineIn > 240 && deadlineIn <= 300, "deadline = now + budget: " + deadlineIn + " s");
        }
        assertEquals(Map.of(), unexpectedMessages(created));

        // a second run of the same job and device class joins the live tasks: nothing new; the joined tasks, still PENDING
        // (no worker here), are announced once more (a first announcement may have been lost; a duplicate is harmless)
        HttpResponse<String> second = createRun(TOKEN, job.id(), cls, ", \"budget\": \"PT10M\", \"trialsPerTask\": 40");
        assertEquals(201, second.statusCode(), second.body());
        long id2 = body(second).get("id").asLong();
        assertEquals(List.of(), longs(body(second).get("createdTaskIds")));
        assertEquals(new TreeSet<>(created), new TreeSet<>(longs(body(second).get("joinedTaskIds"))));
        assertEquals(List.of(40), jdbc.queryForList("SELECT DISTINCT trials_budget FROM tuning_tasks WHERE id = ANY (?)", Integer.class,
                (Object) created.toArray(Long[]::new)), "joining raises the budget to the run's");
        assertEquals(Map.of(), unexpectedMessages(created, 2));

        // cancelling the first run leaves the tasks the second needs
        HttpResponse<String> c1 = postJson(OPERATOR, "/api/v1/tuning-runs/" + id1 + "/cancel", null);
        assertEquals(200, c1.statusCode(), c1.body());
        assertEquals("CANCELLED", body(c1).get("status").asText());
        assertEquals(List.of("PENDING"), taskStatuses(created));
        HttpResponse<String> c2 = postJson(OPERATOR, "/api/v1/tuning-runs/" + id2 + "/cancel", null);
        assertEquals(200, c2.statusCode(), c2.body());
        assertEquals(List.of("CANCELLED"), taskStatuses(created));
        assertEquals(List.of("cancelled with tuning run " + id2), jdbc.queryForList("SELECT DISTINCT note FROM tuning_tasks WHERE id = ANY (?)",
                String.class, (Object) created.toArray(Long[]::new)));
        assertProblem(postJson(OPERATOR, "/api/v1/tuning-runs/" + id2 + "/cancel", null), 409, "is already CANCELLED");

        // with no live task left, a new run tunes again: new tasks, new messages
        HttpResponse<String> third = createRun(OPERATOR, job.id(), cls, ", \"budget\": \"90s\"");
        assertEquals(201, third.statusCode(), third.body());
        List<Long> again = longs(body(third).get("createdTaskIds"));
        assertEquals(created.size(), again.size());
        assertTrue(again.stream().noneMatch(created::contains));
        assertEquals("xgb", body(third).get("strategy").asText(), "the default strategy");
        assertEquals(32, body(third).get("trialsPerTask").asInt(), "the default trials per task");
        assertEquals(Map.of(), unexpectedMessages(again));

        // the list, newest first
        JsonNode list = body(get("/api/v1/tuning-runs?limit=3"));
        assertEquals(List.of(body(third).get("id").asLong(), id2, id1), longs(list.get("runs").findValues("id")));
    }

    @Test
    void statusAndProgressFollowTheTasksAndTheEventStreamEndsWithTheRun() throws Exception {
        OptimizedJob job = optimizedJob();
        HttpResponse<String> r = createRun(OPERATOR, job.id(), deviceClass(), ", \"budget\": \"5m\", \"trialsPerTask\": 10");
        assertEquals(201, r.statusCode(), r.body());
        long id = body(r).get("id").asLong();
        List<Long> tasks = longs(body(r).get("createdTaskIds"));
        CompletableFuture<List<String[]>> events = CompletableFuture.supplyAsync(() -> stream(id));

        // a worker takes the first task: 5 of 10 trials, the rest still pending
        jdbc.update("UPDATE tuning_tasks SET status = 'RUNNING', trials = 5, worker = 'worker-3', default_cost_us = 30, best_cost_us = 20 WHERE id = ?",
                tasks.getFirst());
        JsonNode view = body(get("/api/v1/tuning-runs/" + id));
        assertEquals("RUNNING", view.get("status").asText());
        assertEquals(5.0 / (10 * tasks.size()), view.get("progress").asDouble(), 1e-9);
        JsonNode t0 = null;
        for (JsonNode t : view.get("tasks")) if (t.get("id").asLong() == tasks.getFirst()) t0 = t;
        assertEquals("worker-3", t0.get("worker").asText());
        assertEquals(1.5, t0.get("speedup").asDouble(), 1e-9);

        // every task ends (one exhausted its space early): the run is DONE on read, and stored DONE by the stream
        jdbc.update("UPDATE tuning_tasks SET status = 'DONE', trials = 3, note = 'space exhausted' WHERE id = ANY (?)", (Object) tasks.toArray(Long[]::new));
        view = body(get("/api/v1/tuning-runs/" + id));
        assertEquals("DONE", view.get("status").asText());
        assertEquals(1.0, view.get("progress").asDouble(), 1e-9, "an ended task counts as its whole budget");
        List<String[]> sse = events.get(20, TimeUnit.SECONDS);
        assertEquals("run", sse.getFirst()[0]);
        assertEquals(id, json.readTree(sse.getFirst()[1]).get("id").asLong());
        assertEquals("end", sse.getLast()[0]);
        assertEquals("{\"status\":\"DONE\"}", sse.getLast()[1]);
        assertEquals("DONE", jdbc.queryForObject("SELECT status FROM tuning_runs WHERE id = ?", String.class, id));
        assertProblem(postJson(OPERATOR, "/api/v1/tuning-runs/" + id + "/cancel", null), 409, "is already DONE");
    }

    @Test
    void concurrentRunsOfTheSameWorkloadsShareOneTaskEach() throws Exception {
        String cls = deviceClass();
        List<dev.relayfarm.services.store.RunWorkload> workloads = List.of(new dev.relayfarm.services.store.RunWorkload("race-a-" + cls, "dense_pack.x86", 2),
                new dev.relayfarm.services.store.RunWorkload("race-b-" + cls, "dense_pack.x86", 1));
        var pool = java.util.concurrent.Executors.newFixedThreadPool(6);
        List<java.util.concurrent.Future<dev.relayfarm.services.store.TuningRunCreated>> futures = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            futures.add(pool.submit(() -> runs.create(new dev.relayfarm.services.store.NewTuningRun(null, "race.relay", "ir-ref", TARGET, cls, "random",
                    Duration.ofMinutes(1), 8, "race", workloads))));
        }
        Set<Long> created = new TreeSet<>(), joined = new TreeSet<>();
        for (var f : futures) {
            var c = f.get(30, TimeUnit.SECONDS);
            assertEquals(2, c.newTaskIds().size() + c.joinedTaskIds().size());
            created.addAll(c.newTaskIds());
            joined.addAll(c.joinedTaskIds());
        }
        pool.shutdown();
        assertEquals(2, created.size(), "each workload's task is created once: " + created);
        assertTrue(created.containsAll(joined), "the others joined those: " + joined);
        assertEquals(12, jdbc.queryForObject("SELECT count(*) FROM tuning_run_tasks WHERE task_id = ANY (?)", Integer.class, (Object) created.toArray(Long[]::new)));
    }

    @Test
    void everyRefusalNamesWhatIsWrong() throws Exception {
        String cls = deviceClass();
        UUID queued = submitRelay("not-yet.relay");
        String job = ", \"budget\": \"5m\"";
        assertProblem(postJson(OPERATOR, "/api/v1/tuning-runs", "{\"deviceClass\": \"" + cls + "\", \"budget\": \"5m\"}"), 400, "'jobId' is required");
        assertProblem(postJson(OPERATOR, "/api/v1/tuning-runs", "{\"jobId\": \"42\", \"deviceClass\": \"" + cls + "\", \"budget\": \"5m\"}"), 400,
                "'jobId' must be a job id (a UUID), got '42'");
        assertProblem(createRun(OPERATOR, queued, cls, ""), 400, "'budget' is required");
        assertProblem(createRun(OPERATOR, queued, cls, ", \"budget\": \"300\""), 400, "'budget' must be a duration with a unit");
        assertProblem(createRun(OPERATOR, queued, cls, ", \"budget\": \"30d\""), 400, "at most 7 days");
        assertProblem(createRun(OPERATOR, queued, cls, job + ", \"strategy\": \"bogus\""), 400, "'strategy' must be one of xgb, ga, random, grid, got 'bogus'");
        assertProblem(createRun(OPERATOR, queued, cls, job + ", \"trialsPerTask\": 0"), 400, "'trialsPerTask' must be an integer in 1..100000, got 0");
        assertProblem(createRun(OPERATOR, queued, cls, job + ", \"trialsPerTask\": \"8\""), 400, "'trialsPerTask' must be an integer");
        JsonNode p = assertProblem(createRun(OPERATOR, queued, "gpu-nonexistent", job), 400, "no device of class 'gpu-nonexistent' has registered");
        assertTrue(p.get("detail").asText().contains(cls), "the classes there are are listed: " + p);
        assertProblem(createRun(OPERATOR, UUID.randomUUID(), cls, job), 404, "no job with id");
        assertProblem(createRun(OPERATOR, queued, cls, job), 409, "job " + queued + " is QUEUED and has no optimized module yet");
        assertEquals(0, jdbc.queryForObject("SELECT count(*) FROM tuning_runs WHERE device_class = ?", Integer.class, cls), "no run recorded");
        assertProblem(get("/api/v1/tuning-runs/999999999"), 404, "no tuning run with id 999999999");
        assertProblem(get("/api/v1/tuning-runs/x1"), 400, "not a tuning run id: 'x1'");
        assertProblem(postJson(OPERATOR, "/api/v1/tuning-runs/999999999/cancel", null), 404, "no tuning run with id 999999999");
        assertProblem(send(authed("/api/v1/tuning-runs/999999999/events").header("Accept", "text/event-stream").GET().build()), 404, "no tuning run");
    }

    /** The tuning.tasks messages of {@code tasks}, keyed by task id, that are not exactly one {"taskId": id} each (empty: all as expected). */
    private Map<String, List<String>> unexpectedMessages(List<Long> tasks) {
        return unexpectedMessages(tasks, 1);
    }

    /** Tasks whose messages on tuning.tasks are not exactly {@code times} announcements of themselves. */
    private Map<String, List<String>> unexpectedMessages(List<Long> tasks, int times) {
        Map<String, List<String>> byKey = new java.util.TreeMap<>();
        Set<String> keys = new TreeSet<>();
        for (Long t : tasks) keys.add(t.toString());
        for (ConsumerRecord<String, String> m : TopicReader.readAll(FarmTestInfra.brokers(), FarmTopics.TUNING_TASKS)) {
            if (keys.contains(m.key())) byKey.computeIfAbsent(m.key(), k -> new ArrayList<>()).add(m.value());
        }
        Map<String, List<String>> wrong = new java.util.TreeMap<>();
        for (String k : keys) {
            List<String> got = byKey.getOrDefault(k, List.of());
            if (!got.equals(java.util.Collections.nCopies(times, "{\"taskId\":" + k + "}"))) wrong.put(k, got);
        }
        return wrong;
    }

    private List<String> taskStatuses(List<Long> tasks) {
        return jdbc.queryForList("SELECT DISTINCT status FROM tuning_tasks WHERE id = ANY (?)", String.class, (Object) tasks.toArray(Long[]::new));
    }

    private static List<Long> longs(JsonNode array) {
        List<Long> out = new ArrayList<>();
        for (JsonNode n : array) out.add(n.asLong());
        return out;
    }

    private static List<Long> longs(List<JsonNode> nodes) {
        return nodes.stream().map(JsonNode::asLong).toList();
    }

    /** The whole event stream of a run as (event, data) pairs; fails after 20 s. */
    private List<String[]> stream(long id) {
        HttpRequest req = authed("/api/v1/tuning-runs/" + id + "/events").header("Accept", "text/event-stream").timeout(Duration.ofSeconds(20)).GET().build();
        try {
            HttpResponse<InputStream> r = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, r.statusCode());
            List<String[]> out = new ArrayList<>();
            try (var in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                String line, event = "message";
                StringBuilder data = new StringBuilder();
                while ((line = in.readLine()) != null) {
                    if (line.isEmpty()) {
                        if (!data.isEmpty()) out.add(new String[] {event, data.toString()});
                        event = "message";
                        data.setLength(0);
                    } else if (line.startsWith("event:")) {
                        event = line.substring(6).trim();
                    } else if (line.startsWith("data:")) {
                        data.append(line.substring(5));
                    }
                }
            }
            return out;
        } catch (Exception e) {
            throw new AssertionError("event stream of tuning run " + id, e);
        }
    }
}
