package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.artifact.ArtifactArchive;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Twenty jobs submitted at once all succeed; prints throughput, per-stage latency (work and queue wait, from
 * stage_results) and the farm's overhead over the same compile as one in-process library call
 * (the same {@code dev.relayfarm.pipeline.Stages} functions the services call, then the tarball). Both sides run with the kernel library
 * cache warm, so the difference is the pipeline's own cost: Kafka hops, IR JSON and blobs through PostgreSQL,
 * job bookkeeping, the artifact tarball.
 */
@ExtendWith(E2eFarmExtension.class)
class ConcurrentJobsTest {
    static final int JOBS = 20;

    @Test
    void twentyConcurrentJobsAllSucceed(E2eFarm farm) throws Exception {
        Path mnist = OnnxTestData.models().map(m -> m.resolve("mnist8_cntk/model.onnx")).filter(Files::isRegularFile).orElse(null);
        Path model = mnist != null ? mnist : Path.of("../examples/mlp.relay");
        System.out.println("concurrent jobs: model " + model + (mnist == null ? " (no ../shared/onnx: the repository's MLP instead)" : ""));

        // One job alone first: warms the kernel cache and the services' JIT, and gives the unloaded latency.
        String warm = farm.submit(model, "");
        assertEquals("SUCCEEDED", farm.await(warm).path("status").asText());
        String single = farm.submit(model, "");
        assertEquals("SUCCEEDED", farm.await(single).path("status").asText());
        long singleMs = farm.endToEndMs(single);

        long t0 = System.nanoTime();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < JOBS; i++) ids.add(farm.submit(model, ""));
        for (String id : ids) {
            JsonNode job = farm.await(id);
            assertEquals("SUCCEEDED", job.path("status").asText(), job.toString());
        }
        double wallS = (System.nanoTime() - t0) / 1e9;
        for (String id : ids) assertEquals(1, farm.count("SELECT count(*) FROM artifacts WHERE job_id = ?", id), id);

        Map<String, List<long[]>> perStage = new LinkedHashMap<>();
        long[] e2e = new long[JOBS];
        for (int i = 0; i < JOBS; i++) {
            e2e[i] = farm.endToEndMs(ids.get(i));
            for (E2eFarm.StageTiming s : farm.stageTimings(ids.get(i))) {
                perStage.computeIfAbsent(s.stage(), k -> new ArrayList<>()).add(new long[] {s.workMs(), s.waitMs()});
            }
        }

        long inProcessMs = inProcessCompileMs(model, farm.work.resolve("in-process"));

        StringBuilder t = new StringBuilder();
        t.append(String.format(Locale.ROOT, "%n%d concurrent jobs of %s: all SUCCEEDED in %.1f s = %.2f jobs/s; end to end per job median %d ms, p90 %d ms%n",
                JOBS, model.getFileName(), wallS, JOBS / wallS, pct(e2e, 0.5), pct(e2e, 0.9)));
        t.append(String.format(Locale.ROOT, "| %-9s | %12s | %12s | %12s | %12s |%n", "stage", "work median", "work p90", "wait median", "wait p90"));
        t.append("|-----------|--------------|--------------|--------------|--------------|\n");
        for (var e : perStage.entrySet()) {
            long[] work = e.getValue().stream().mapToLong(a -> a[0]).toArray();
            long[] wait = e.getValue().stream().mapToLong(a -> a[1]).toArray();
            t.append(String.format(Locale.ROOT, "| %-9s | %9d ms | %9d ms | %9d ms | %9d ms |%n", e.getKey(), pct(work, 0.5), pct(work, 0.9), pct(wait, 0.5), pct(wait, 0.9)));
        }
        t.append(String.format(Locale.ROOT, "%nKafka pipeline vs in-process library call (%s, warm kernel cache, one job alone):%n", model.getFileName()));
        t.append(String.format(Locale.ROOT, "| in-process (the 5 stage functions)   | %6d ms |%n", inProcessMs));
        t.append(String.format(Locale.ROOT, "| farm, submit to SUCCEEDED            | %6d ms |%n", singleMs));
        t.append(String.format(Locale.ROOT, "| overhead                             | %6d ms (%.1fx) |%n", singleMs - inProcessMs, (double) singleMs / Math.max(1, inProcessMs)));
        System.out.println(t);
    }

    /** The same compile as one library call in this JVM, best of three (the cache is warm from the farm's jobs). */
    static long inProcessCompileMs(Path model, Path out) throws Exception {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            long t = System.nanoTime();
            // The five stage functions the services call, in one process, and the tarball the farm serves.
            IRModule typed = Stages.inferTypes(Stages.importModel(ModelSource.read(model), ""));
            IRModule optimized = Stages.optimize(typed, 3);
            CompileOptions options = CompileOptions.host(3);
            Stages.tasks(optimized, options.target());
            Path dir = out.resolve("run" + i);
            Stages.codegen(optimized, options, dir);
            ArtifactArchive.pack(dir);
            best = Math.min(best, (System.nanoTime() - t) / 1_000_000);
        }
        return best;
    }

    static long pct(long[] xs, double q) {
        long[] s = xs.clone();
        Arrays.sort(s);
        return s[Math.max(0, Math.min(s.length - 1, (int) Math.ceil(q * s.length) - 1))];
    }
}
