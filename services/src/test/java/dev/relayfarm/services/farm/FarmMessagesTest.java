package dev.relayfarm.services.farm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.relayfarm.artifact.KernelSignature;
import dev.relayfarm.artifact.TensorSpec;
import dev.relayfarm.ir.DType;
import dev.relayfarm.kernel.template.ScheduleConfig;
import dev.relayfarm.services.kit.FarmTopics;
import dev.relayfarm.tuning.measure.Candidate;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The farm's messages as written match their schemas (schemas/messages) and read back equal; a mismatch is an error. */
class FarmMessagesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static List<String> errors(String schema, String message) throws Exception {
        JsonNode node = JSON.readTree(Path.of("..", "schemas", "messages", schema + ".schema.json").toFile());
        Schema s = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(node);
        return s.validate(JSON.readTree(message)).stream().map(Object::toString).toList();
    }

    @Test
    void requestsResultsAndTasksMatchTheirSchemasAndRoundTrip() throws Exception {
        KernelSignature sig = new KernelSignature("k0", List.of(new TensorSpec("x", List.of(4, 8), DType.FLOAT32), new TensorSpec("y", List.of(4, 8), DType.FLOAT32)), 1);
        Candidate ref = new Candidate("injective([4,8])", new ScheduleConfig("injective.x86", Map.of("vec", 8)), "int32_t k0(void* const* args) { return 0; }", sig);
        MeasureCandidate c = MeasureCandidate.CKernel.of(ref);
        MeasureRequest req = new MeasureRequest(UUID.randomUUID(), 7, "worker-1", "cpu-x86_64-avx2-2c-12345678", "c -mcpu=native", c, List.of(c), Instant.now());
        String json = FarmMessages.write(req);
        assertEquals(List.of(), errors("measure.requests", json));
        assertTrue(json.contains("\"kind\":\"c\""), json);
        assertEquals(req, FarmMessages.read(json, MeasureRequest.class));
        assertEquals(ref, ((MeasureCandidate.CKernel) FarmMessages.read(json, MeasureRequest.class).reference()).candidate());

        // a VTA layer schedule: the module by reference, never its weights
        ScheduleConfig tiles = new ScheduleConfig("vta.gemm_tiles", Map.of("tile_rows", 4, "tile_co_blocks", 1, "tile_ci_blocks", 1, "virtual_threads", 2));
        MeasureCandidate layer = new MeasureCandidate.VtaLayer("vta.conv2d[ci=3]", tiles, "ab".repeat(32));
        MeasureRequest vta = new MeasureRequest(UUID.randomUUID(), 8, "worker-1", "vta-sim-1x16x16", "vta-sim -gemm=1x16x16", layer, List.of(layer), Instant.now());
        json = FarmMessages.write(vta);
        assertEquals(List.of(), errors("measure.requests", json));
        assertTrue(json.contains("\"kind\":\"vta-layer\""), json);
        assertEquals(vta, FarmMessages.read(json, MeasureRequest.class));
        // an unknown kind, or a field of the other kind, is an error naming it
        var unknown = assertThrows(IllegalArgumentException.class, () -> FarmMessages.read(FarmMessages.write(vta).replace("vta-layer", "gpu"), MeasureRequest.class));
        assertTrue(unknown.getMessage().contains("gpu"), unknown.getMessage());
        assertTrue(!errors("measure.requests", FarmMessages.write(vta).replace("\"irRef\"", "\"kernelSource\"")).isEmpty());
        var mixed = assertThrows(IllegalArgumentException.class, () -> new MeasureRequest(UUID.randomUUID(), 9, "w", "vta-sim-1x16x16", "vta-sim", layer, List.of(c), Instant.now()));
        assertTrue(mixed.getMessage().contains("candidate 0 is a CKernel, its reference a VtaLayer"), mixed.getMessage());

        MeasureResult res = new MeasureResult(req.requestId(), 7, "worker-1", "host/cpu0", false, List.of("{}", "{}"), Instant.now());
        json = FarmMessages.write(res);
        assertEquals(List.of(), errors("measure.results", json));
        assertEquals(res, FarmMessages.read(json, MeasureResult.class));

        String task = FarmTopics.tuningTask(42).value();
        assertEquals(List.of(), errors("tuning.tasks", task));
        assertEquals(42, FarmMessages.read(task, TuningTaskMessage.class).taskId());
    }

    @Test
    void aMessageOfAnotherShapeIsAnErrorNamingIt() {
        var e = assertThrows(IllegalArgumentException.class, () -> FarmMessages.read("{\"taskId\": 1, \"extra\": true}", TuningTaskMessage.class));
        assertTrue(e.getMessage().contains("TuningTaskMessage") && e.getMessage().contains("extra"), e.getMessage());
    }
}
