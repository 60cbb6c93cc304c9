package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.MeasureOptions;
import dev.relayfarm.tuning.measure.SandboxedRunner;
import dev.relayfarm.tuning.record.RecordContext;
import dev.relayfarm.tuning.scheduler.Tuner;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Issue 16's throughput figure, opt-in ({@code -Drelayfarm.bench=true}; run it alone, on an idle machine): the same
 * model's workloads tuned for the same wall-clock budget (xgb, batches of 8, full measurements) three ways — the
 * library's {@code Tuner} in one process (what {@code relayc tune} runs), the farm with one tuner worker and one
 * agent process, and the farm with two agent processes — and the measurements per minute each made, as a table.
 * Every phase starts from empty tuning tables, so no phase resumes another's records.
 *
 * <p>{@code ./mvnw -pl e2e-tests -am test -Dtest=FarmThroughputBenchmark -Dsurefire.failIfNoSpecifiedTests=false
 * -Drelayfarm.bench=true [-Drelayfarm.bench.budget=120] [-Drelayfarm.bench.model=light_squeezenet]}
 */
@ExtendWith(E2eFarmExtension.class)
class FarmThroughputBenchmark {
    @Test
    void measurementsPerMinuteInProcessAndWithOneAndTwoAgents(E2eFarm farm) throws Exception {
        assumeTrue(Boolean.getBoolean("relayfarm.bench"), "opt-in benchmark: -Drelayfarm.bench=true");
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        String name = System.getProperty("relayfarm.bench.model", "light_squeezenet");
        Path model = OnnxTestData.light().map(l -> l.resolve(name + ".onnx")).filter(Files::isRegularFile).orElse(null);
        assumeTrue(model != null, "no ../shared/onnx/light/" + name + ".onnx");
        Duration budget = Duration.ofSeconds(Long.getLong("relayfarm.bench.budget", 120));
        Target target = Target.parse("c -mcpu=native");

        // in one process: the library's tuner, its sandboxed runner, the model's tasks
        IRModule optimized = Stages.optimize(Stages.inferTypes(Stages.importModel(ModelSource.of(model.getFileName().toString(), ModelFormat.ONNX,
                Files.readAllBytes(model)), "")), 3, target);
        List<TuningTask> tasks = Stages.tasks(optimized, target);
        SandboxedRunner runner = SandboxedRunner.forTarget(target, MeasureOptions.DEFAULT).orElseThrow();
        Path records = farm.work.resolve("bench-in-process.jsonl");
        long t0 = System.nanoTime();
        new Tuner(runner, RecordContext.local(target, CCompiler.forTarget(target).orElseThrow()), records,
                new Tuner.Options("xgb", 8, 0, budget, 1, 64), null).tune(tasks, Tuner.callsPerWorkload(optimized, tasks), List.of());
        double inProcessMin = (System.nanoTime() - t0) / 60e9;
        long inProcess = Files.readAllLines(records).size();

        String job = farm.client.submit(model, Map.of("opt_level", "3", "tune", "off"));
        assertEquals("SUCCEEDED", farm.await(job).path("status").asText());
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"in one process (relayc tune)", Long.toString(inProcess), fmt(inProcessMin), fmt(inProcess / inProcessMin)});
        for (int agents = 1; agents <= 2; agents++) {
            clearTuning(farm);
            ConfigurableApplicationContext worker = farm.farm.startServices("tuner-worker", 0, Map.of("relayfarm.tuner.concurrency", Integer.toString(agents + 1)));
            List<Process> procs = new ArrayList<>();
            try {
                for (int i = 0; i < agents; i++) procs.add(agent(farm, "bench" + i));
                while (count(farm, "SELECT count(*) FROM devices WHERE status = 'ONLINE' AND id LIKE '%/bench_'") < agents) Thread.sleep(200);
                String deviceClass = text(farm, "SELECT device_class FROM devices WHERE id LIKE '%/bench0'");
                long start = System.nanoTime();
                String run = postRun(farm, "{\"jobId\": \"" + job + "\", \"budget\": \"" + budget.toSeconds() + "s\", \"strategy\": \"xgb\", \"deviceClass\": \""
                        + deviceClass + "\", \"trialsPerTask\": 100000}");
                while (!List.of("DONE", "CANCELLED", "FAILED").contains(text(farm, "SELECT status FROM tuning_runs WHERE id = " + run))
                        && System.nanoTime() - start < budget.plusSeconds(60).toNanos()) {
                    Thread.sleep(500); // the workers refresh the run's status as its tasks end
                }
                double minutes = (System.nanoTime() - start) / 60e9;
                long measured = count(farm, "SELECT count(*) FROM tuning_records WHERE request_id IS NOT NULL");
                rows.add(new String[] {"farm, 1 worker, " + agents + " agent process" + (agents > 1 ? "es" : ""), Long.toString(measured), fmt(minutes),
                        fmt(measured / minutes)});
            } finally {
                for (Process p : procs) p.destroy();
                for (Process p : procs) {
                    p.waitFor(60, TimeUnit.SECONDS);
                    p.destroyForcibly();
                }
                worker.close();
            }
        }
        System.out.printf(Locale.ROOT, "%nTuning throughput, %s (%d tasks), budget %s, xgb, batches of 8, full measurements (MeasureOptions.DEFAULT), %d cores:%n",
                name, tasks.size(), budget, Runtime.getRuntime().availableProcessors());
        System.out.printf(Locale.ROOT, "%-36s %12s %9s %14s %10s%n", "setup", "measurements", "minutes", "per minute", "vs 1 proc");
        double base = Double.parseDouble(rows.getFirst()[3]);
        for (String[] r : rows) System.out.printf(Locale.ROOT, "%-36s %12s %9s %14s %9.2fx%n", r[0], r[1], r[2], r[3], Double.parseDouble(r[3]) / base);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    /** Empty tuning tables: a phase must not resume the previous one's records (the worker never re-measures a config). */
    private static void clearTuning(E2eFarm farm) throws Exception {
        try (Connection c = farm.db(); Statement s = c.createStatement()) {
            s.execute("DELETE FROM schedule_history; DELETE FROM schedules; DELETE FROM tuning_run_tasks; DELETE FROM tuning_records; "
                    + "DELETE FROM tuning_tasks; DELETE FROM tuning_runs");
        }
    }

    private static String postRun(E2eFarm farm, String json) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(farm.farm.gatewayUrl() + "/api/v1/tuning-runs"))
                .header("Authorization", "Bearer " + farm.farm.token()).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build();
        HttpResponse<String> res = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString());
        assertEquals(201, res.statusCode(), res.body());
        JsonNode body = new com.fasterxml.jackson.databind.ObjectMapper().readTree(res.body());
        return body.path("run").path("id").asText(body.path("id").asText());
    }

    private static Process agent(E2eFarm farm, String name) throws Exception {
        return farm.startFarmProcess("agent", name, "--name", name);
    }

    private static long count(E2eFarm farm, String sql) {
        return Long.parseLong(farm.text(sql));
    }

    private static String text(E2eFarm farm, String sql) {
        return farm.text(sql);
    }
}
