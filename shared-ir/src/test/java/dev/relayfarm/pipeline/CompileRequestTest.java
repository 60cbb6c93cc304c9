package dev.relayfarm.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.IRModule;
import dev.relayfarm.kernel.target.Target;
import dev.relayfarm.passes.OptLevels;
import dev.relayfarm.text.RelayParser;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The defaults and checks of a compile request, and the two opt-level ranges. */
class CompileRequestTest {
    private static final ModelSource RELAY = ModelSource.of("m.relay", ModelFormat.RELAY,
            "def @main(%x: Tensor[(2), float32]) { add(%x, %x) }".getBytes(StandardCharsets.UTF_8));

    @Test
    void defaultsAreAValidRequest() {
        Target t = Target.parse(CompileRequest.DEFAULT_TARGET);
        CompileRequest r = new CompileRequest(RELAY, t, CompileRequest.DEFAULT_OPT_LEVEL, Map.of());
        assertEquals(3, r.optLevel());
        assertEquals(t, r.compileOptions(Map.of()).target());
        assertEquals(3, r.compileOptions(Map.of()).optLevel());
    }

    @Test
    void anArtifactNeedsFusedLevelsWhileOptimizeTakesEveryLevel() {
        assertEquals("0..3", OptLevels.PIPELINE.toString());
        assertEquals("1..3", CompileRequest.OPT_LEVELS.toString());
        Target t = Target.parse(CompileRequest.DEFAULT_TARGET);
        for (int bad : new int[] {0, 4, -1}) {
            var e = assertThrows(ModelInputException.class, () -> new CompileRequest(RELAY, t, bad, Map.of()));
            assertEquals(CompileRequest.INVALID_OPT_LEVEL, e.diagnostic().code());
            assertEquals("opt level must be 1..3 for an artifact (the graph executor runs fused kernels), got " + bad, e.getMessage());
        }
        IRModule typed = Stages.inferTypes(RelayParser.parseModule("def @main(%x: Tensor[(2), float32]) { add(%x, %x) }", "m.relay"));
        Stages.optimize(typed, 0);
        var e = assertThrows(ModelInputException.class, () -> Stages.optimize(typed, 4));
        assertEquals("opt level must be 0..3, got 4", e.getMessage());
        assertEquals(CompileRequest.INVALID_OPT_LEVEL, e.diagnostic().code());
    }

    @Test
    void shapesKeepTheirOrderAndCannotChangeAfterwards() {
        Map<String, List<Long>> shapes = new LinkedHashMap<>(InputShapes.parse("b=1x2,a=3"));
        CompileRequest r = new CompileRequest(RELAY, Target.parse(CompileRequest.DEFAULT_TARGET), 2, shapes);
        shapes.clear();
        assertEquals("b=1x2,a=3", InputShapes.format(r.shapes()));
        assertThrows(UnsupportedOperationException.class, () -> r.shapes().clear());
        assertThrows(NullPointerException.class, () -> new CompileRequest(null, Target.parse(CompileRequest.DEFAULT_TARGET), 3, Map.of()));
    }

    @Test
    void oneShapeParserForTheCliAndTheJobField() {
        assertEquals("shapes: input x is bound twice", assertThrows(InputShapeException.class, () -> InputShapes.parse("x=1x3,x=2")).getMessage());
        assertEquals("--shape: input x is bound twice", assertThrows(InputShapeException.class, () -> InputShapes.of(List.of("x=1", "x=2"))).getMessage());
        assertEquals("shapes expects NAME=D0xD1x..., got an empty entry", assertThrows(InputShapeException.class, () -> InputShapes.parse("x=1,")).getMessage());
        assertTrue(assertThrows(InputShapeException.class, () -> InputShapes.parse("x=")).problem() instanceof ShapeProblem.Undimensioned);
        assertTrue(assertThrows(InputShapeException.class, () -> InputShapes.parse("=1x2")).problem() instanceof ShapeProblem.Unnamed);
        assertEquals("invalid-shapes", assertThrows(InputShapeException.class, () -> InputShapes.of(List.of("x=1xq"))).diagnostic().code());
    }

    @Test
    void oneFormatDetectorByNameThenContent() {
        assertEquals(ModelFormat.ONNX, ModelFormat.detect("Model.ONNX", "text".getBytes(StandardCharsets.UTF_8)).orElseThrow());
        assertEquals(ModelFormat.ONNX, ModelFormat.detect("upload", new byte[] {0x08, 0x07}).orElseThrow());
        assertEquals(ModelFormat.RELAY, ModelFormat.detect(null, "def @main() { 1f }".getBytes(StandardCharsets.UTF_8)).orElseThrow());
        assertTrue(ModelFormat.detect("x.bin", new byte[] {(byte) 0xff, (byte) 0xfe}).isEmpty());
        assertEquals(ModelFormat.RELAY, ModelFormat.of(" Relay "));
        assertEquals(ModelFormat.UNKNOWN_FORMAT, assertThrows(ModelInputException.class, () -> ModelFormat.of("tflite")).diagnostic().code());
    }
}
