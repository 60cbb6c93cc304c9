package dev.relayfarm.services.tuner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.services.FarmTestInfra;
import dev.relayfarm.services.RelayFarmServices;
import dev.relayfarm.services.agent.HardwareAgent;
import dev.relayfarm.services.farm.FarmMessages;
import dev.relayfarm.services.farm.TuningTaskMessage;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.tuning.TuningModels;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.measure.Candidate;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A tuner worker and a hardware agent in one process against a real Kafka broker and a real PostgreSQL: a task put
 * on {@code tuning.tasks} is searched by the worker, measured by the agent (sandboxed, real gcc), every trial lands
 * in {@code tuning_records} exactly once with the agent's device, and the best that beat the default becomes a
 * PENDING schedule. One candidate is deliberately wrong (and fast: it skips the work): it is recorded as
 * WRONG_ANSWER by the agent's output check and is never the schedule.
 */
@SpringBootTest(classes = {RelayFarmServices.class, WorkerAgentTest.WrongOnce.class}, properties = {
        "relayfarm.roles=tuner-worker,hardware-agent", "relayfarm.agent.fast=true", "relayfarm.agent.name=test-agent",
        "relayfarm.tuner.concurrency=1", "spring.main.web-application-type=none"})
class WorkerAgentTest {
    static final String MLP = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(4, 64), float32], %w: Tensor[(48, 64), float32], %b: Tensor[(48), float32]) {
              nn.relu(nn.bias_add(nn.dense(%x, %w), %b))
            }
            """;

    @DynamicPropertySource
    static void infra(DynamicPropertyRegistry r) {
        FarmTestInfra.register(r);
    }

    @BeforeAll
    static void compiler() {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: agents cannot measure here");
    }

    /** The first candidate config the worker lowers becomes a kernel that returns at once: wrong, and faster than anything. */
    @TestConfiguration
    static class WrongOnce {
        static final AtomicReference<ScheduleConfig> wrong = new AtomicReference<>();

        @Bean
        CandidateLowering wrongOnce() {
            return (task, config) -> {
                Candidate real = Candidate.lower(task, config);
                if (!wrong.compareAndSet(null, config)) return real;
                String entry = "int32_t " + real.signature().name() + "(void* const* args) {";
                assertTrue(real.kernelSource().contains(entry), "kernel entry in the source");
                return real.withSource(real.kernelSource().replace(entry, entry + "\n  return 0;"));
            };
        }
    }

    @Autowired JdbcTemplate jdbc;
    @Autowired IrStore ir;
    @Autowired KafkaTemplate<String, String> kafka;
    @Autowired HardwareAgent agent;

    @Test
    void aTaskIsSearchedMeasuredRecordedOnceAndProposed() throws Exception {
        Target target = Target.host();
        IRModule module = TuningModels.optimized(MLP, target);
        TuningTask task = Stages.tasks(module, target).getFirst();
        String irRef = ir.write(module);
        int trials = 6;
        long taskId = jdbc.queryForObject("""
                INSERT INTO tuning_tasks (workload_key, template, target, device_class, strategy, ir_ref, trials_budget, batch)
                VALUES (?, ?, ?, ?, 'random', ?, ?, 3) RETURNING id
                """, Long.class, task.key(), task.template(), target.toString(), agent.device().deviceClass(), irRef, trials);
        kafka.send(FarmTopics.TUNING_TASKS, Long.toString(taskId), FarmMessages.write(new TuningTaskMessage(taskId))).get();

        String status = awaitEnd(taskId, Duration.ofMinutes(3));
        Map<String, Object> row = jdbc.queryForMap("SELECT status, trials, note, worker, default_cost_us, best_cost_us FROM tuning_tasks WHERE id = ?", taskId);
        assertEquals("DONE", status, "task row: " + row);

        // exactly once: no (request, position) twice, every record by the agent's device, trials as budgeted
        assertEquals(0, jdbc.queryForObject("SELECT count(*) FROM (SELECT request_id, position FROM tuning_records WHERE task_id = ? "
                + "GROUP BY 1, 2 HAVING count(*) > 1) d", Integer.class, taskId));
        List<Map<String, Object>> records = jdbc.queryForList("SELECT config::text AS config, cost_us, error, device_id, position FROM tuning_records "
                + "WHERE task_id = ? ORDER BY id", taskId);
        assertTrue(records.stream().allMatch(r -> agent.deviceId().equals(r.get("device_id"))), "every record names the agent: " + records);
        long candidates = records.stream().filter(r -> ((Number) r.get("position")).intValue() > 0).map(r -> r.get("config")).distinct().count();
        assertEquals(trials, candidates, "distinct candidate configs recorded: " + records);
        assertEquals(trials, ((Number) row.get("trials")).intValue(), "the task's progress: " + row);

        // the wrong one: recorded as WRONG_ANSWER, counted on the device, never the schedule
        ScheduleConfig wrong = WrongOnce.wrong.get();
        Map<String, Object> wrongRecord = records.stream().filter(r -> ScheduleConfig.fromJson((String) r.get("config")).equals(wrong)).findFirst().orElseThrow();
        assertEquals("WRONG_ANSWER", wrongRecord.get("error"), "the broken candidate: " + wrongRecord);
        assertTrue(jdbc.queryForObject("SELECT (failures ->> 'WRONG_ANSWER')::int FROM devices WHERE id = ?", Integer.class, agent.deviceId()) >= 1);
        List<String> schedules = jdbc.queryForList("SELECT config::text FROM schedules WHERE workload_key = ? AND device_class = ?", String.class,
                task.key(), agent.device().deviceClass());
        for (String s : schedules) assertNotEquals(wrong, ScheduleConfig.fromJson(s), "a wrong answer became the schedule");
        if (!schedules.isEmpty()) {
            // proposed only after a second measurement of the best config confirmed it
            assertEquals(2, jdbc.queryForObject("SELECT measurements FROM schedules WHERE workload_key = ? AND device_class = ?", Integer.class,
                    task.key(), agent.device().deviceClass()));
            assertEquals(2, records.stream().filter(r -> ScheduleConfig.fromJson((String) r.get("config")).equals(ScheduleConfig.fromJson(schedules.getFirst()))
                    && ((Number) r.get("position")).intValue() > 0).count(), "the proposed config's two measurements");
            assertEquals("PENDING", jdbc.queryForObject("SELECT status FROM schedules WHERE workload_key = ? AND device_class = ?", String.class,
                    task.key(), agent.device().deviceClass()));
            assertEquals(1, jdbc.queryForObject("SELECT count(*) FROM schedule_history h JOIN schedules s ON s.id = h.schedule_id "
                    + "WHERE s.workload_key = ? AND h.action = 'PROPOSED'", Integer.class, task.key()));
        }
        assertTrue(((String) row.get("note")).contains(schedules.isEmpty() ? "the default stays" : "proposed schedule"), "note: " + row);

        // a redelivered message of a finished task does nothing
        kafka.send(FarmTopics.TUNING_TASKS, Long.toString(taskId), FarmMessages.write(new TuningTaskMessage(taskId))).get();
        Thread.sleep(3000);
        assertEquals(records.size(), jdbc.queryForObject("SELECT count(*) FROM tuning_records WHERE task_id = ?", Integer.class, taskId));
        assertEquals(1, jdbc.queryForObject("SELECT attempts FROM tuning_tasks WHERE id = ?", Integer.class, taskId));
    }

    private String awaitEnd(long taskId, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        String status;
        do {
            Thread.sleep(500);
            status = jdbc.queryForObject("SELECT status FROM tuning_tasks WHERE id = ?", String.class, taskId);
        } while (!List.of("DONE", "FAILED", "CANCELLED").contains(status) && System.nanoTime() < end);
        return status;
    }
}
