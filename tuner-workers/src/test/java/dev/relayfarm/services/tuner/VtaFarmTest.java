package dev.relayfarm.services.tuner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.services.FarmTestInfra;
import dev.relayfarm.services.RelayFarmServices;
import dev.relayfarm.services.agent.AgentProperties;
import dev.relayfarm.services.agent.HardwareAgent;
import dev.relayfarm.services.farm.FarmMessages;
import dev.relayfarm.services.farm.TuningTaskMessage;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.tuning.Measurement;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.compile.QuantizedRelay;
import dev.relayfarm.vta.tuning.SimulatorMeasurer;
import dev.relayfarm.vta.tuning.VtaLayerTask;
import dev.relayfarm.vta.tuning.VtaLayerTasks;
import dev.relayfarm.vta.tuning.VtaTarget;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * An FPGA agent on the farm protocol, against a real Kafka broker and a real PostgreSQL: the agent registers device
 * class {@code vta-sim-1x16x16}; a VTA layer task put on {@code tuning.tasks} is walked by the tuner worker in rounds
 * sent to {@code measure.requests.vta-sim-1x16x16} as {@code vta-layer} candidates; the agent simulates them; every
 * trial lands in {@code tuning_records} once with that device class and its simulated cycles, which are the cycles
 * the library's simulator measurer gives here, the best no more than the default's.
 */
@SpringBootTest(classes = RelayFarmServices.class, properties = {
        "relayfarm.roles=tuner-worker,hardware-agent", "relayfarm.agent.name=fpga-test", "relayfarm.agent.device-class=vta-sim-1x16x16",
        "relayfarm.tuner.concurrency=1", "spring.main.web-application-type=none"})
class VtaFarmTest {
    @DynamicPropertySource
    static void infra(DynamicPropertyRegistry r) {
        FarmTestInfra.register(r);
    }

    @Autowired JdbcTemplate jdbc;
    @Autowired IrStore ir;
    @Autowired KafkaTemplate<String, String> kafka;
    @Autowired HardwareAgent agent;

    @Test
    void aVtaLayerTaskIsTunedThroughTheFpgaAgentIntoRecordsOfItsDeviceClass() throws Exception {
        assertEquals("vta-sim-1x16x16", agent.device().deviceClass());
        Map<String, Object> device = jdbc.queryForMap("SELECT device_class, compiler, status, hardware::text AS hardware FROM devices WHERE id = ?", agent.deviceId());
        assertEquals("vta-sim-1x16x16", device.get("device_class"));
        assertEquals(VtaTarget.LOWERING, device.get("compiler"));
        assertTrue(((String) device.get("hardware")).contains("SIMULATOR"), "the device says it is simulated: " + device);

        // 64 → 64 channels, 3×3 at 14×14, relu and a uint8 output: a ResNet-style layer with a few dozen schedules that fit
        IRModule module = QuantizedRelay.conv(2, 64, 14, 14, 64, 3, 1, 1, DType.INT8, true, true, 1e-4, 5e-3);
        VtaLayerTask task = VtaLayerTasks.of(module, VtaConfig.defaults()).getFirst();
        String target = VtaTarget.target(VtaConfig.defaults());
        int trials = 10;
        long taskId = jdbc.queryForObject("""
                INSERT INTO tuning_tasks (workload_key, template, target, device_class, strategy, ir_ref, trials_budget, batch)
                VALUES (?, ?, ?, 'vta-sim-1x16x16', 'grid', ?, ?, 4) RETURNING id
                """, Long.class, task.key(), VtaLayerTask.TEMPLATE, target, ir.write(module), trials);
        kafka.send(FarmTopics.TUNING_TASKS, Long.toString(taskId), FarmMessages.write(new TuningTaskMessage(taskId))).get();

        String status = awaitEnd(taskId, Duration.ofSeconds(90));
        Map<String, Object> row = jdbc.queryForMap("SELECT status, trials, note, default_cost_us, best_cost_us FROM tuning_tasks WHERE id = ?", taskId);
        assertEquals("DONE", status, "task row: " + row);
        assertEquals(trials, ((Number) row.get("trials")).intValue(), "the trial budget: " + row);

        List<Map<String, Object>> records = jdbc.queryForList("SELECT config::text AS config, cost_us, error, device_id, device_class, target, template, "
                + "compiler, position FROM tuning_records WHERE task_id = ? ORDER BY id", taskId);
        assertEquals(0, jdbc.queryForObject("SELECT count(*) FROM (SELECT request_id, position FROM tuning_records WHERE task_id = ? "
                + "GROUP BY 1, 2 HAVING count(*) > 1) d", Integer.class, taskId), "a (request, position) written twice");
        for (Map<String, Object> r : records) {
            assertEquals("vta-sim-1x16x16", r.get("device_class"), r.toString());
            assertEquals(agent.deviceId(), r.get("device_id"), r.toString());
            assertEquals(target, r.get("target"));
            assertEquals(VtaLayerTask.TEMPLATE, r.get("template"));
            assertEquals(VtaTarget.LOWERING, r.get("compiler"));
            assertTrue(r.get("error") == null && r.get("cost_us") != null, "every schedule of the grid fits and is bit-exact: " + r);
        }
        long candidates = records.stream().filter(r -> ((Number) r.get("position")).intValue() > 0).map(r -> r.get("config")).distinct().count();
        assertEquals(trials, candidates);

        // the farm's cycles are the simulator's here (deterministic): the default's and the best's
        SimulatorMeasurer local = new SimulatorMeasurer();
        double defaultUs = ((Number) row.get("default_cost_us")).doubleValue(), bestUs = ((Number) row.get("best_cost_us")).doubleValue();
        assertEquals(local.measure(task, List.of(task.defaultConfig())).getFirst().costUs(), defaultUs);
        Map<String, Object> bestRecord = records.stream().filter(r -> ((Number) r.get("position")).intValue() > 0)
                .min((a, b) -> Double.compare(((Number) a.get("cost_us")).doubleValue(), ((Number) b.get("cost_us")).doubleValue())).orElseThrow();
        Measurement again = local.measure(task, List.of(ScheduleConfig.fromJson((String) bestRecord.get("config")))).getFirst();
        assertEquals(again.costUs(), bestUs, "the best record's cycles, simulated again here");
        assertTrue(bestUs <= defaultUs, "best " + VtaTarget.cycles(bestUs) + " cycles vs default " + VtaTarget.cycles(defaultUs));
        System.out.printf("VTA task %d: %d trials, default %d cycles, best %d; %s%n", taskId, candidates, VtaTarget.cycles(defaultUs), VtaTarget.cycles(bestUs),
                row.get("note"));

        // a schedule is proposed exactly when the best took fewer cycles
        List<String> schedules = jdbc.queryForList("SELECT status FROM schedules WHERE workload_key = ? AND device_class = 'vta-sim-1x16x16'", String.class, task.key());
        assertEquals(bestUs < defaultUs ? List.of("PENDING") : List.of(), schedules, "note: " + row.get("note"));
        assertTrue(jdbc.queryForObject("SELECT measured FROM devices WHERE id = ?", Long.class, agent.deviceId()) >= trials, "the agent counted its measurements");
    }

    /** A device class the agent cannot be is refused at start, naming the property, its value and the classes there are. */
    @Test
    void anAgentOfAnUnknownDeviceClassIsRefusedNamingTheSetting() {
        AgentProperties bad = new AgentProperties("fpga1", Duration.ofSeconds(2), Duration.ofSeconds(6), Duration.ofSeconds(120), false, 0, "vta-sim-1x32x32");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new HardwareAgent(bad, null, null, null, null, null, null));
        assertTrue(e.getMessage().contains("relayfarm.agent.device-class=vta-sim-1x32x32") && e.getMessage().contains("vta-sim-1x16x16"), e.getMessage());
    }

    private String awaitEnd(long taskId, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        String status;
        do {
            Thread.sleep(300);
            status = jdbc.queryForObject("SELECT status FROM tuning_tasks WHERE id = ?", String.class, taskId);
        } while (!List.of("DONE", "FAILED", "CANCELLED").contains(status) && System.nanoTime() < end);
        return status;
    }
}
