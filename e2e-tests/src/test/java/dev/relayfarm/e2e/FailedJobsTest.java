package dev.relayfarm.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TensorShapeProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * User errors end a job at the stage that found them, with that stage's message, and do not disturb the jobs
 * around them: three bad jobs are submitted between two good ones (the repository's example MLP in Relay text)
 * and all five are in the pipeline at once.
 */
@ExtendWith(E2eFarmExtension.class)
class FailedJobsTest {
    /** A type error the parser accepts: adding a (2, 3) tensor to a (4, 5) one does not broadcast. */
    static final String BAD_TYPES = """
            #[version = "0.0.5"]
            def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4, 5), float32]) {
              add(%x, %y)
            }
            """;

    @Test
    void userErrorsFailAtTheirStageWhileOtherJobsSucceed(E2eFarm farm) throws Exception {
        Path mlp = Path.of("../examples/mlp.relay");
        assertTrue(Files.isRegularFile(mlp), "the repository's examples/mlp.relay");
        String good1 = farm.submit(mlp, "");
        String malformed = farm.submit("broken.onnx", "this is not a protobuf model \u0000\u0001\u0002".getBytes(StandardCharsets.UTF_8));
        String unsupported = farm.submit("bernoulli.onnx", unsupportedOpModel().toByteArray());
        String badTypes = farm.submit("bad_types.relay", BAD_TYPES.getBytes(StandardCharsets.UTF_8));
        String good2 = farm.submit(mlp, "");

        assertFailed(farm, malformed, "import", "broken.onnx");
        assertFailed(farm, unsupported, "import", "Bernoulli");
        assertFailed(farm, badTypes, "infer", "add");
        for (String good : new String[] {good1, good2}) {
            JsonNode job = farm.await(good);
            assertEquals("SUCCEEDED", job.path("status").asText(), job.toString());
            assertEquals(1, farm.count("SELECT count(*) FROM artifacts WHERE job_id = ?", good));
        }
    }

    /** FAILED over REST and in the database, at {@code stage}, with a message that names {@code mentions}; no artifact. */
    private static void assertFailed(E2eFarm farm, String id, String stage, String mentions) throws Exception {
        JsonNode job = farm.await(id);
        assertEquals("FAILED", job.path("status").asText(), job.toString());
        String restStage = job.path("error").path("stage").asText();
        String restMessage = job.path("error").path("message").asText();
        System.out.printf("job %s FAILED at %s: %s%n", id, restStage, restMessage);
        assertEquals(stage, restStage, job.toString());
        assertTrue(restMessage.contains(mentions), "the message should name " + mentions + ": " + restMessage);
        try (Connection c = farm.db();
             PreparedStatement q = c.prepareStatement("SELECT error_stage, error_message FROM jobs WHERE id = ?")) {
            q.setObject(1, UUID.fromString(id));
            try (ResultSet rs = q.executeQuery()) {
                assertTrue(rs.next());
                assertEquals(stage, rs.getString(1));
                assertEquals(restMessage, rs.getString(2));
            }
        }
        assertEquals(0, farm.count("SELECT count(*) FROM artifacts WHERE job_id = ?", id));
        assertEquals(1, farm.count("SELECT count(*) FROM job_events WHERE job_id = ? AND kind = 'FAILED'", id));
    }

    /**
     * x[1,4] -> Bernoulli (opset 15), an ONNX operator the importer does not convert (its random draws come from a
     * generator ONNX leaves unspecified, so no output could be checked against a reference).
     */
    static ModelProto unsupportedOpModel() {
        TensorShapeProto.Builder shape = TensorShapeProto.newBuilder();
        for (long d : new long[] {1, 4}) shape.addDim(TensorShapeProto.Dimension.newBuilder().setDimValue(d));
        TypeProto f = TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(TensorProto.DataType.FLOAT_VALUE).setShape(shape)).build();
        GraphProto g = GraphProto.newBuilder().setName("unsupported")
                .addInput(ValueInfoProto.newBuilder().setName("x").setType(f))
                .addNode(NodeProto.newBuilder().setOpType("Bernoulli").setName("bernoulli_0").addInput("x").addOutput("y"))
                .addOutput(ValueInfoProto.newBuilder().setName("y").setType(f))
                .build();
        return ModelProto.newBuilder().setIrVersion(8).addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(15)).setGraph(g).build();
    }
}
