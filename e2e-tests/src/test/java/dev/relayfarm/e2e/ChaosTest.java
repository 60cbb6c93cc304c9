package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.infra.FarmClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Chaos on the real farm (issue 13): while 20 good jobs run, a poison job (a Relay program nested 100,000 deep),
 * jobs the farm must refuse cleanly (an empty module, an input of 110 TiB), a runaway
 * compile (a model whose C takes gcc longer than the codegen timeout, set low here) and a cancel storm (jobs
 * cancelled twice at random moments of their pipeline) are injected. Every good job SUCCEEDS, every bad one FAILS
 * at its stage with its reason, every cancelled one ends CANCELLED with no artifact; then a compile is cancelled
 * while gcc runs, and the next job goes straight through. No compiler process is left running afterwards.
 */
@ExtendWith(E2eFarmExtension.class)
class ChaosTest {
    static final int GOOD_JOBS = 20;
    static final int CANCELLED_JOBS = 12;
    /** The codegen timeout for this test: far above a good job's compile, far below the runaway one's. */
    static final String COMPILE_TIMEOUT = "10s";
    private static final Set<String> COMPILER_PROCESSES = Set.of("cc", "gcc", "cc1", "as", "ld", "collect2", "clang", "x86_64-linux-gnu-gcc-12");

    @Test
    void goodJobsSucceedWhileBadOnesFailAndCancelledOnesStop(E2eFarm farm) throws Exception {
        Path mlp = Path.of("../examples/mlp.relay");
        Path mnist = OnnxTestData.models().map(m -> m.resolve("mnist8_cntk/model.onnx")).filter(Files::isRegularFile).orElse(null);
        farm.restartSeparateStage(Map.of("relayfarm.limits.compile-timeout", COMPILE_TIMEOUT));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            // The runaway compile goes first so that it is in gcc while everything else arrives.
            String runaway = farm.submit("runaway.relay", runawayModel(1000).getBytes(StandardCharsets.UTF_8));
            List<String> good = new ArrayList<>();
            Map<String, String[]> bad = new LinkedHashMap<>(); // job -> {stage, what the message names}
            bad.put(runaway, new String[] {"codegen", "relayfarm.limits.compile-timeout"});
            List<Future<String>> cancelled = new ArrayList<>();
            Random rng = new Random(13);
            for (int i = 0; i < GOOD_JOBS; i++) {
                good.add(i % 2 == 0 || mnist == null ? farm.submit(mlp, "") : farm.submit(mnist, ""));
                if (i == 3) bad.put(farm.submit("poison.relay", deepNesting(100_000)), new String[] {"import", "poison.relay:"});
                if (i == 6) bad.put(farm.submit("empty.relay", "#[version = \"0.0.5\"]\n".getBytes(StandardCharsets.UTF_8)), new String[] {"infer", "main"});
                if (i == 9) bad.put(farm.submit("huge.relay", ("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 3, 99999999, 99999), float32]) { nn.relu(%x) }\n")
                        .getBytes(StandardCharsets.UTF_8)), new String[] {"import", "relayfarm.limits.max-tensor-bytes"});
                if (i % 2 == 1 && cancelled.size() < CANCELLED_JOBS) {
                    String victim = farm.submit(mlp, "");
                    long delay = rng.nextInt(1500);
                    cancelled.add(pool.submit(() -> cancelTwice(farm.client, victim, delay)));
                }
            }
            while (cancelled.size() < CANCELLED_JOBS) {
                String victim = farm.submit(mlp, "");
                long delay = rng.nextInt(1500);
                cancelled.add(pool.submit(() -> cancelTwice(farm.client, victim, delay)));
            }

            for (String id : good) {
                JsonNode job = farm.await(id);
                assertEquals("SUCCEEDED", job.path("status").asText(), "a good job: " + job);
            }
            for (Map.Entry<String, String[]> e : bad.entrySet()) {
                JsonNode job = farm.await(e.getKey());
                String stage = e.getValue()[0], names = e.getValue()[1];
                System.out.printf("chaos: job %s FAILED at %s: %s%n", e.getKey(), job.path("error").path("stage").asText(), job.path("error").path("message").asText());
                assertEquals("FAILED", job.path("status").asText(), job.toString());
                assertEquals(stage, job.path("error").path("stage").asText(), job.toString());
                assertTrue(job.path("error").path("message").asText().contains(names), "the reason should name " + names + ": " + job);
            }
            int stopped = 0;
            for (Future<String> f : cancelled) {
                String id = f.get();
                JsonNode job = farm.await(id);
                String status = job.path("status").asText();
                // A cancel that came after the job ended was refused (409): the job keeps its end. One the gateway took must hold.
                if (status.equals("CANCELLED")) {
                    stopped++;
                    assertEquals(0, farm.count("SELECT count(*) FROM artifacts WHERE job_id = ?", id), "a cancelled job has no artifact: " + job);
                } else {
                    assertEquals("SUCCEEDED", status, "a cancel that came too late leaves the job as it ended: " + job);
                }
            }
            // A compile cancelled while gcc runs: the stage is interrupted, gcc and its children are killed, the job ends CANCELLED.
            String cancelledCompile = farm.submit("runaway-cancelled.relay", runawayModel(999).getBytes(StandardCharsets.UTF_8));
            awaitStatus(farm, cancelledCompile, "GENERATING");
            long waitGcc = System.nanoTime() + 60_000_000_000L;
            while (compilers().stream().noneMatch(c -> c.contains("cc1"))) {
                assertTrue(System.nanoTime() < waitGcc, "gcc never started for the job to cancel");
                Thread.sleep(20);
            }
            long cancelAt = System.nanoTime();
            farm.client.cancel(cancelledCompile);
            JsonNode cc = farm.await(cancelledCompile);
            assertEquals("CANCELLED", cc.path("status").asText(), cc.toString());
            // the stage is interrupted and gcc killed with everything it started, long before the 10 s timeout
            long gone = System.nanoTime() + 8_000_000_000L;
            while (!compilers().isEmpty()) {
                assertTrue(System.nanoTime() < gone, "gcc still runs 8 s after the cancel: " + compilers());
                Thread.sleep(20);
            }
            long stopMs = (System.nanoTime() - cancelAt) / 1_000_000;
            String after = farm.submit(mlp, "");
            JsonNode afterJob = farm.await(after);
            assertEquals("SUCCEEDED", afterJob.path("status").asText(), afterJob.toString());
            System.out.printf("chaos: a compile cancelled while gcc ran: CANCELLED, gcc gone %d ms after the cancel; the next job took %d ms end to end%n",
                    stopMs, farm.endToEndMs(after));
            System.out.printf("chaos: %d good jobs SUCCEEDED, %d bad ones FAILED with their reasons, %d of %d cancelled jobs stopped (the rest had ended first)%n",
                    good.size(), bad.size(), stopped, CANCELLED_JOBS);
            assertTrue(stopped > 0, "the cancel storm should stop some jobs in flight");
        } finally {
            pool.shutdownNow();
            farm.restartSeparateStage(Map.of());
        }
        // Every compiler the farm started has ended: killed at its timeout, by a cancel, or finished.
        Thread.sleep(2_000);
        assertEquals(List.of(), compilers(), "compiler processes still running after the chaos");
    }

    /**
     * The compilers this JVM (the farm's services run in it) has started and that still run: gcc under setsid is a
     * new session, but still this process's descendant.
     */
    private static List<String> compilers() {
        return ProcessHandle.current().descendants()
                .filter(ProcessHandle::isAlive)
                .filter(p -> p.info().command().map(c -> COMPILER_PROCESSES.contains(Path.of(c).getFileName().toString())).orElse(false))
                .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
                .toList();
    }

    private static void awaitStatus(E2eFarm farm, String id, String status) throws InterruptedException {
        long deadline = System.nanoTime() + 120_000_000_000L;
        String now;
        while (!(now = farm.client.job(id).path("status").asText()).equals(status)) {
            assertTrue(System.nanoTime() < deadline, "job " + id + " never reached " + status + ", it is " + now);
            assertTrue(!Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(now) || now.equals(status), "job " + id + " ended " + now + " before " + status);
            Thread.sleep(50);
        }
    }

    /** Cancels the job after {@code delayMs}, then once more at once (the second is a no-op or a 409). */
    private static String cancelTwice(FarmClient client, String id, long delayMs) throws InterruptedException {
        Thread.sleep(delayMs);
        for (int i = 0; i < 2; i++) {
            try {
                client.cancel(id);
            } catch (FarmClient.ApiException e) {
                assertEquals(409, e.status, "cancelling an ended job is a conflict, nothing else: " + e.getMessage());
            }
        }
        return id;
    }

    /** {@code def @main() { ((((...1...)))) }}: 200 KB that once overflowed the parser's stack and stopped the importer. */
    static byte[] deepNesting(int depth) {
        return ("#[version = \"0.0.5\"]\ndef @main() {\n  " + "(".repeat(depth) + "1f" + ")".repeat(depth) + "\n}\n").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A chain of convolutions whose channel counts all differ, so that each is its own kernel: {@code n} conv2d
     * templates in one C file (1,000: 3.9 MB), which gcc at -O3 needs over a minute for (400 of them: 12-27 s here).
     */
    static String runawayModel(int n) {
        StringBuilder sb = new StringBuilder("#[version = \"0.0.5\"]\ndef @main(%x0: Tensor[(1, 1, 16, 16), float32]");
        for (int i = 1; i <= n; i++) sb.append(", %w").append(i).append(": Tensor[(").append(i + 1).append(", ").append(i).append(", 3, 3), float32]");
        sb.append(") {\n");
        for (int i = 1; i <= n; i++) {
            sb.append("  let %x").append(i).append(" = nn.relu(nn.conv2d(%x").append(i - 1).append(", %w").append(i)
                    .append(", padding=[1, 1, 1, 1], channels=").append(i + 1).append(", kernel_size=[3, 3]));\n");
        }
        return sb.append("  %x").append(n).append("\n}\n").toString();
    }
}
