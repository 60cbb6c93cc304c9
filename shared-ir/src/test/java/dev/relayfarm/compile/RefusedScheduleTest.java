package dev.relayfarm.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.kernel.template.InvalidConfigException;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.pipeline.ModelFormat;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.tuning.TuningTask;
import dev.relayfarm.tuning.TuningTasks;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stored schedule the template now refuses (records outlive template changes: a later version may cap what an
 * earlier one measured) does not fail the compile: the kernel gets its default, and the manifest says so.
 */
class RefusedScheduleTest {
    @Test
    void aRefusedStoredConfigFallsBackToTheDefault(@TempDir Path tmp) throws Exception {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        Target host = Target.host();
        IRModule optimized = Stages.optimize(Stages.inferTypes(Stages.importModel(ModelSource.of("conv.relay", ModelFormat.RELAY, """
                #[version = "0.0.5"]
                def @main(%x: Tensor[(1, 16, 16, 16), float32], %w: Tensor[(32, 16, 3, 3), float32]) {
                  nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3]))
                }
                """.getBytes(StandardCharsets.UTF_8)), "")), 3, host);
        TuningTask conv = Stages.tasks(optimized, host).stream().filter(t -> t.template().startsWith("conv2d_NCHWc")).findFirst().orElseThrow();
        ScheduleConfig refused = conv.space().all().filter(c -> {
            try {
                TuningTasks.lower(conv, c);
                return false;
            } catch (InvalidConfigException e) {
                return true;
            }
        }).findFirst().orElseThrow(() -> new AssertionError("the widened conv2d_NCHWc space refuses oversized tiles: " + conv.key()));

        Stages.codegen(optimized, new CompileOptions(host, 3, Map.of(conv.key(), refused)), tmp.resolve("a"));

        JsonNode manifest = new ObjectMapper().readTree(tmp.resolve("a/manifest.json").toFile());
        int seen = 0;
        for (JsonNode k : manifest.get("kernels")) {
            if (!k.get("workload").asText().equals(conv.key())) continue;
            seen++;
            assertEquals(new ObjectMapper().readTree(conv.defaultConfig().toJson()), k.get("config"));
            assertEquals("default", k.get("source").asText());
        }
        assertEquals(conv.kernels().size(), seen, "the conv kernels are in the manifest");
    }
}
