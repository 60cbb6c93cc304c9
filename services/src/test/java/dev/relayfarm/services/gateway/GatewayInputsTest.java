package dev.relayfarm.services.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.pipeline.InputShapes;
import dev.relayfarm.pipeline.ModelFormat;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/** The gateway's request checks and token rules, without a server. */
class GatewayInputsTest {

    @Test
    void shapesAreNormalizedOrRejectedWithTheEntry() {
        assertEquals("", InputShapes.format(SubmitFields.shapes(null)));
        assertEquals("", InputShapes.format(SubmitFields.shapes("  ")));
        assertEquals("x=1x3x224x224,mask=1x224", InputShapes.format(SubmitFields.shapes(" x=1x3x224x224 , mask=1x224")));
        assertEquals("shapes: entry '' is empty (expected NAME=D0xD1x..., entries separated by commas, e.g. x=1x3x224x224)",
                assertThrows(ApiProblem.class, () -> SubmitFields.shapes("x=1,")).getMessage());
        assertEquals(ProblemType.BAD_SHAPES, assertThrows(ApiProblem.class, () -> SubmitFields.shapes("=1x2")).type());
        assertTrue(assertThrows(ApiProblem.class, () -> SubmitFields.shapes("x=")).getMessage().contains("has no dimensions"));
        assertTrue(assertThrows(ApiProblem.class, () -> SubmitFields.shapes("x=1x-3")).getMessage().contains("below 1"));
    }

    @Test
    void libraryRejectionsKeepTheirDiagnosticCode() {
        assertEquals("invalid-shapes", assertThrows(ApiProblem.class, () -> SubmitFields.shapes("x=1x3,x=2")).toProblem().getProperties().get("code"));
        assertEquals("shapes: entry 'x=1x3' names input 'x' a second time (expected NAME=D0xD1x..., entries separated by commas, e.g. x=1x3x224x224)",
                assertThrows(ApiProblem.class, () -> SubmitFields.shapes("x=2,x=1x3")).getMessage());
        assertEquals("invalid-target", assertThrows(ApiProblem.class, () -> SubmitFields.target("c -mcpu=pentium9")).toProblem().getProperties().get("code"));
        assertEquals("unknown-format", assertThrows(ApiProblem.class, () -> SubmitFields.format("tflite")).toProblem().getProperties().get("code"));
    }

    @Test
    void modelFormatByNameThenContent() {
        byte[] text = "def @main() { 1f }".getBytes(StandardCharsets.UTF_8);
        assertEquals(ModelFormat.ONNX, SubmitFields.detectFormat("Model.ONNX", text), "the name wins over the content");
        assertEquals(ModelFormat.RELAY, SubmitFields.detectFormat("net.relay", new byte[] {0x08}));
        assertEquals(ModelFormat.ONNX, SubmitFields.detectFormat("upload", new byte[] {0x08, 0x07}));
        assertEquals(ModelFormat.RELAY, SubmitFields.detectFormat(null, text));
        assertEquals(ProblemType.BAD_FORMAT, assertThrows(ApiProblem.class, () -> SubmitFields.detectFormat("x.bin", new byte[] {(byte) 0xff, (byte) 0xfe})).type());
        assertEquals(ModelFormat.RELAY, SubmitFields.format(" Relay "));
    }

    @Test
    void jobIdsMustBeCanonicalUuids() {
        UUID id = UUID.randomUUID();
        assertEquals(id, JobsController.jobId(id.toString()));
        assertEquals(id, JobsController.jobId(id.toString().toUpperCase()));
        assertEquals(ProblemType.BAD_JOB_ID, assertThrows(ApiProblem.class, () -> JobsController.jobId("0-0-0-0-0")).type());
        assertEquals(ProblemType.BAD_JOB_ID, assertThrows(ApiProblem.class, () -> JobsController.jobId("42")).type());
    }

    @Test
    void tokenFromPropertyGeneratedInLocalModeOtherwiseNone() {
        GatewayToken set = new GatewayToken(new MockEnvironment().withProperty("relayfarm.token", "s3cret"));
        assertTrue(set.matches("s3cret"));
        assertFalse(set.matches("s3cre"));
        assertFalse(set.matches(null));
        assertFalse(set.generated());

        GatewayToken local = new GatewayToken(new MockEnvironment().withProperty("relayfarm.local", "true"));
        assertTrue(local.generated());
        assertTrue(local.value().orElseThrow().length() >= 32, "at least 24 random bytes");
        assertTrue(local.matches(local.value().orElseThrow()));
        GatewayToken other = new GatewayToken(new MockEnvironment().withProperty("relayfarm.local", "true"));
        assertFalse(other.matches(local.value().orElseThrow()), "each start generates its own");

        GatewayToken none = new GatewayToken(new MockEnvironment());
        assertTrue(none.value().isEmpty());
        assertFalse(none.matches(""), "no token configured: nothing matches, not even an empty one");
    }
}
