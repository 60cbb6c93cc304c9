package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.services.farm.FarmMessages;
import dev.relayfarm.services.farm.TuningTaskMessage;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.services.store.IrStore;
import dev.relayfarm.vta.VtaConfig;
import dev.relayfarm.vta.compile.QuantizedRelay;
import dev.relayfarm.vta.tuning.VtaLayerTask;
import dev.relayfarm.vta.tuning.VtaLayerTasks;
import dev.relayfarm.vta.tuning.VtaTarget;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.core.KafkaTemplate;

/**
 * The FPGA agent as the farm runs it: {@code ./relayfarm agent --device-class vta-sim-1x16x16} in a JVM of its own,
 * beside a tuner worker, on the e2e farm's broker and database. It shows in {@code GET /api/v1/devices} with its class;
 * a VTA layer task is tuned through it, and the records land in PostgreSQL with class {@code vta-sim-1x16x16}, the best
 * taking no more cycles than the default. SIGTERM drains it to OFFLINE.
 */
@ExtendWith(E2eFarmExtension.class)
class VtaFarmE2eTest {
    @Test
    void anFpgaAgentProcessTunesAVtaLayerIntoRecordsOfItsClass(E2eFarm farm) throws Exception {
        ConfigurableApplicationContext worker = farm.farm.startServices("tuner-worker", 0, Map.of("relayfarm.tuner.concurrency", "1"));
        Process agent = farm.startFarmProcess("agent", "fpga0", "--name", "fpga0", "--device-class", "vta-sim-1x16x16");
        try {
            awaitTrue(() -> "ONLINE".equals(farm.text("SELECT status FROM devices WHERE id LIKE '%/fpga0' AND device_class = 'vta-sim-1x16x16'")),
                    Duration.ofSeconds(90), "the FPGA agent ONLINE with class vta-sim-1x16x16");
            HttpResponse<String> devices = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(farm.farm.gatewayUrl() + "/api/v1/devices"))
                    .header("Authorization", "Bearer " + farm.farm.token()).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, devices.statusCode());
            assertTrue(devices.body().contains("vta-sim-1x16x16") && devices.body().contains("SIMULATOR"), devices.body());

            // a layer of its own shape (no other test tunes it): 32 → 48 channels, 3×3 stride 2 at 20×20, uint8 input
            IRModule module = QuantizedRelay.conv(21, 32, 20, 20, 48, 3, 2, 1, DType.UINT8, false, false, 1e-4, 5e-3);
            VtaLayerTask task = VtaLayerTasks.of(module, VtaConfig.defaults()).getFirst();
            String irRef = farm.farm.services().getBean(IrStore.class).write(module);
            long taskId;
            try (Connection c = farm.db(); PreparedStatement q = c.prepareStatement("""
                    INSERT INTO tuning_tasks (workload_key, template, target, device_class, strategy, ir_ref, trials_budget, batch)
                    VALUES (?, ?, ?, 'vta-sim-1x16x16', 'grid', ?, 8, 4) RETURNING id""")) {
                q.setString(1, task.key());
                q.setString(2, VtaLayerTask.TEMPLATE);
                q.setString(3, VtaTarget.target(VtaConfig.defaults()));
                q.setString(4, irRef);
                try (ResultSet rs = q.executeQuery()) {
                    rs.next();
                    taskId = rs.getLong(1);
                }
            }
            @SuppressWarnings("unchecked")
            KafkaTemplate<String, String> kafka = farm.farm.services().getBean(KafkaTemplate.class);
            kafka.send(FarmTopics.TUNING_TASKS, Long.toString(taskId), FarmMessages.write(new TuningTaskMessage(taskId))).get(30, TimeUnit.SECONDS);

            awaitTrue(() -> java.util.List.of("DONE", "FAILED", "CANCELLED").contains(status(farm, taskId)), Duration.ofSeconds(90), "task " + taskId + " ended");
            assertEquals("DONE", status(farm, taskId), farm.text("SELECT note FROM tuning_tasks WHERE id = " + taskId));
            assertEquals(8, Long.parseLong(farm.text("SELECT count(DISTINCT config) FROM tuning_records WHERE task_id = " + taskId + " AND position > 0")));
            assertEquals("0", farm.text("SELECT count(*) FROM tuning_records WHERE task_id = " + taskId
                    + " AND (device_class <> 'vta-sim-1x16x16' OR device_id NOT LIKE '%/fpga0' OR cost_us IS NULL)"), "a record of another class or device, or a failure");
            double defaultUs = Double.parseDouble(farm.text("SELECT cost_us FROM tuning_records WHERE task_id = " + taskId + " AND position = 0 LIMIT 1"));
            double bestUs = Double.parseDouble(farm.text("SELECT min(cost_us) FROM tuning_records WHERE task_id = " + taskId + " AND position > 0"));
            assertTrue(bestUs <= defaultUs, "best " + bestUs + " us vs default " + defaultUs);
            System.out.printf("VTA layer %s through the FPGA agent process: default %d cycles, best %d; %s%n", task.key(), VtaTarget.cycles(defaultUs),
                    VtaTarget.cycles(bestUs), farm.text("SELECT note FROM tuning_tasks WHERE id = " + taskId));

            agent.destroy(); // SIGTERM: drains, then OFFLINE
            assertTrue(agent.waitFor(60, TimeUnit.SECONDS), "the agent exits on SIGTERM");
            assertEquals("OFFLINE", farm.text("SELECT status FROM devices WHERE id LIKE '%/fpga0'"));
        } finally {
            agent.destroyForcibly();
            worker.close();
        }
    }

    private static String status(E2eFarm farm, long taskId) {
        return farm.text("SELECT status FROM tuning_tasks WHERE id = " + taskId);
    }

    private static void awaitTrue(BooleanSupplier condition, Duration timeout, String what) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
            Thread.sleep(200);
        }
    }
}
