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
        MeasureRequest req = new MeasureRequest(UUID.randomUUID(), 7, "worker-1", "cpu-x86_64-avx2-2c-12345678", "c -mcpu=native", ref, List.of(ref), Instant.now());
        String json = FarmMessages.write(req);
        assertEquals(List.of(), errors("measure.requests", json));
        assertEquals(req, FarmMessages.read(json, MeasureRequest.class));

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
