package dev.relayfarm.services.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.relayfarm.cli.Relayc;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.StoredSchedule;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.JdbcTemplate;
import picocli.CommandLine;

/**
 * The farm and {@code relayc compile --schedules} apply the same rule: one set of stored schedules, as rows of the
 * farm's {@code schedules} table (read by {@link ScheduleStore#choose}, what the autotuner stage calls) and as the
 * lines of a schedules file given to {@code relayc compile}, gives every kernel the same config — a pin even when
 * measured slower, an approved schedule measured faster, the default where the only schedule is approved but slower,
 * pending, for another target, or for another template of the operator.
 */
class ScheduleChoiceAgreementTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Five workloads: dense layers of four shapes (the first twice) and a softmax. */
    private static final String LAYERS = TuningModels.LAYERS;
    private static EmbeddedPostgres postgres;
    private static JdbcTemplate jdbc;

    @BeforeAll
    static void database() throws Exception {
        postgres = EmbeddedPostgres.builder().start();
        Flyway.configure().dataSource(postgres.getPostgresDatabase()).locations("classpath:db/migration").load().migrate();
        jdbc = new JdbcTemplate(postgres.getPostgresDatabase());
    }

    @AfterAll
    static void stop() throws Exception {
        postgres.close();
    }

    /** One stored schedule as a row and as a file line. */
    private record Stored(String key, String target, ScheduleConfig config, String status, Double costUs, Double defaultCostUs) {}

    @Test
    void theFarmAndRelaycChooseTheSameConfigs(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler");
        Target target = Target.host();
        Path model = tmp.resolve("layers.relay");
        Files.writeString(model, LAYERS);
        IRModule optimized = Stages.optimize(Stages.inferTypes(Stages.importModel(ModelSource.read(model), Map.of())), 3, target);
        List<TuningTask> tasks = Stages.tasks(optimized, target);
        assertEquals(5, tasks.size(), tasks.toString());
        String here = target.toString(), elsewhere = "c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
        String alternative = tasks.get(2).template().equals("dense_pack.x86") ? "dense_nopack.x86" : "dense_pack.x86";
        List<Stored> stored = List.of(
                new Stored(tasks.get(0).key(), here, other(tasks.get(0)), "PINNED", 30.0, 20.0),
                new Stored(tasks.get(1).key(), here, other(tasks.get(1)), "APPROVED", 10.0, 20.0),
                new Stored(tasks.get(2).key(), here, new ScheduleConfig(alternative, Map.of("tile_y", 1)), "APPROVED", 10.0, 20.0),
                new Stored(tasks.get(3).key(), here, other(tasks.get(3)), "APPROVED", 30.0, 20.0),
                new Stored(tasks.get(4).key(), here, other(tasks.get(4)), "PENDING", 1.0, 20.0),
                new Stored(tasks.get(4).key(), elsewhere, other(tasks.get(4)), "PINNED", null, null));

        // the farm: rows in the schedules table, the autotuner stage's lookup
        jdbc.update("DELETE FROM schedules");
        List<String> lines = new ArrayList<>();
        for (Stored s : stored) {
            jdbc.update("INSERT INTO schedules (workload_key, target, template, config, cost_us, default_cost_us, status) VALUES (?, ?, ?, ?::jsonb, ?, ?, ?)",
                    s.key(), s.target(), s.config().template(), s.config().toJson(), s.costUs(), s.defaultCostUs(), s.status());
            ObjectNode line = JSON.createObjectNode().put("workload", s.key()).put("target", s.target()).put("status", s.status().toLowerCase());
            line.set("config", JSON.readTree(s.config().toJson()));
            if (s.costUs() != null) line.put("cost_us", s.costUs());
            if (s.defaultCostUs() != null) line.put("default_cost_us", s.defaultCostUs());
            lines.add(line.toString());
        }
        Map<String, StoredSchedule> farm = new ScheduleStore(jdbc).choose(tasks, target, dev.relayfarm.tuning.Device.UNKNOWN_CLASS);
        Map<String, ScheduleConfig> farmConfigs = new HashMap<>();
        for (TuningTask t : tasks) farmConfigs.put(t.key(), farm.containsKey(t.key()) ? farm.get(t.key()).config() : t.defaultConfig());
        assertEquals(Map.of(tasks.get(0).key(), other(tasks.get(0)), tasks.get(1).key(), other(tasks.get(1))),
                Map.of(tasks.get(0).key(), farmConfigs.get(tasks.get(0).key()), tasks.get(1).key(), farmConfigs.get(tasks.get(1).key())),
                "the pin and the faster approved schedule apply");
        assertEquals(2, farm.size(), farm.toString());

        // relayc: the same schedules as a file
        Path file = tmp.resolve("schedules.jsonl");
        Files.write(file, lines);
        Path out = tmp.resolve("artifact");
        StringWriter err = new StringWriter();
        CommandLine cli = Relayc.commandLine();
        cli.setOut(new PrintWriter(new StringWriter(), true));
        cli.setErr(new PrintWriter(err, true));
        assertEquals(0, cli.execute("compile", model.toString(), "--target", here, "--schedules", file.toString(), "-o", out.toString()), err.toString());
        Map<String, ScheduleConfig> relaycConfigs = new HashMap<>();
        for (JsonNode k : JSON.readTree(out.resolve("manifest.json").toFile()).get("kernels")) {
            ScheduleConfig c = ScheduleConfig.fromJson(k.get("config").toString());
            ScheduleConfig previous = relaycConfigs.put(k.get("workload").asText(), c);
            if (previous != null) assertEquals(previous, c, "kernels sharing a workload share its config");
        }
        assertEquals(farmConfigs, relaycConfigs);
    }

    /** A point of the task's space other than its default. */
    private static ScheduleConfig other(TuningTask task) {
        ScheduleConfig c = task.space().get(task.space().size() - 1);
        return c.equals(task.defaultConfig()) ? task.space().get(0) : c;
    }
}
