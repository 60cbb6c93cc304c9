package dev.relayfarm.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.diagnostic.CompileError;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TensorShapeProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.ir.IRModule;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Sizes checked at import: shapes that bind absurd dims, inputs and constants over the limits. The farm's error
 * names the job's {@code shapes} field, the CLI's the {@code --shape} flag.
 */
class ImportLimitsTest {
    /** relu over x[N, 3, H, W]: every dim but one bound by the shapes. */
    static ModelSource dynamicRelu() {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder();
        for (String d : List.of("N", "C", "H", "W")) s.addDim(TensorShapeProto.Dimension.newBuilder().setDimParam(d));
        TypeProto t = TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(TensorProto.DataType.FLOAT_VALUE).setShape(s)).build();
        GraphProto g = GraphProto.newBuilder().setName("g").addInput(ValueInfoProto.newBuilder().setName("x").setType(t))
                .addNode(NodeProto.newBuilder().setOpType("Relu").setName("r").addInput("x").addOutput("y"))
                .addOutput(ValueInfoProto.newBuilder().setName("y").setType(t)).build();
        ModelProto m = ModelProto.newBuilder().setIrVersion(8).addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(13)).setGraph(g).build();
        return ModelSource.of("relu.onnx", ModelFormat.ONNX, m.toByteArray());
    }

    static ModelSource relay(String name, String text) {
        return ModelSource.of(name, ModelFormat.RELAY, text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void shapesThatOverflowOrAreNotPositiveFailWithTheFieldTheyCameFrom() {
        var job = assertThrows(ModelInputException.class, () -> InputShapes.parse("x=1x3x99999999999x99999999999"));
        assertEquals("shapes: element count of x (1x3x99999999999x99999999999) overflows a 64-bit count", job.getMessage());
        var cli = assertThrows(ModelInputException.class, () -> InputShapes.of(List.of("x=1x3x99999999999x99999999999")));
        assertEquals("--shape: element count of x (1x3x99999999999x99999999999) overflows a 64-bit count", cli.getMessage());
        assertEquals("shapes: x=1x0x3: dim 1 is 0, dims must be positive (? keeps a dim dynamic)", assertThrows(ModelInputException.class, () -> InputShapes.parse("x=1x0x3")).getMessage());
        assertEquals("shapes: x=2x-1: dim 1 is -1, dims must be positive (? keeps a dim dynamic)", assertThrows(ModelInputException.class, () -> InputShapes.parse("x=2x-1")).getMessage());
        assertEquals("shapes expects NAME=D0xD1x..., got 'x=1xq'", assertThrows(ModelInputException.class, () -> InputShapes.parse("x=1xq")).getMessage());
        assertTrue(job instanceof CompileError);
    }

    @Test
    void aBoundInputOverThePerTensorLimitFailsAtImport() {
        // the example: 1x3x99999999x99999 float32 compiled into an artifact wanting a 410 TB arena
        var e = assertThrows(ModelInputException.class, () -> Stages.importModel(dynamicRelu(), "x=1x3x99999999x99999"));
        assertEquals("shapes: x=1x3x99999999x99999 float32 needs 109.1 TiB (119998798800012 bytes), the limit is 4 GiB per tensor"
                + " (relayfarm.limits.max-tensor-bytes)", e.getMessage());
        var cli = assertThrows(ModelInputException.class, () -> Stages.importModel(dynamicRelu(), Map.of("x", List.of(1L, 3L, 99999999L, 99999L))));
        assertTrue(cli.getMessage().startsWith("--shape: x=1x3x99999999x99999 float32 needs"), cli.getMessage());
        // within the limits the same model imports; a lower limit set by the farm applies
        IRModule ok = Stages.importModel(dynamicRelu(), "x=1x3x224x224");
        assertTrue(ok.main().isPresent());
        var low = assertThrows(ModelInputException.class, () -> Stages.importModel(dynamicRelu(), "x=1x3x224x224", new ImportLimits(100_000, 1L << 40)));
        assertEquals("shapes: x=1x3x224x224 float32 needs 602112 bytes, the limit is 100000 bytes per tensor (relayfarm.limits.max-tensor-bytes)", low.getMessage());
    }

    @Test
    void declaredInputsAndConstantsAreCheckedToo() {
        var input = assertThrows(ModelInputException.class,
                () -> Stages.importModel(relay("big.relay", "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(300000000, 300000000), float32]) { nn.relu(%x) }"), ""));
        assertTrue(input.getMessage().startsWith("big.relay: input x (300000000x300000000) float32 needs ")
                && input.getMessage().endsWith(", the limit is 4 GiB per tensor (relayfarm.limits.max-tensor-bytes)"), input.getMessage());
        var overflow = assertThrows(ModelInputException.class,
                () -> Stages.importModel(relay("huge.relay", "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(99999999999, 99999999999), int8]) { %x }"), ""));
        assertEquals("huge.relay: input x (99999999999x99999999999): its element count overflows a 64-bit count", overflow.getMessage());

        String withConstant = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(4), float32]) {\n  add(%x, ones(shape=[4], dtype=\"float32\"))\n}\n";
        IRModule folded = Stages.optimize(Stages.inferTypes(Stages.importModel(relay("c.relay", withConstant), "")), 2);
        var constant = assertThrows(ModelInputException.class, () -> new ImportLimits(8, 1000).check(folded, "c.relay", Map.of(), InputShapes.JOB));
        assertTrue(constant.getMessage().startsWith("c.relay: input x (4) float32 needs 16 bytes, the limit is 8 bytes per tensor"), constant.getMessage());
        var total = assertThrows(ModelInputException.class, () -> new ImportLimits(16, 24).check(folded, "c.relay", Map.of(), InputShapes.JOB));
        assertEquals("c.relay: inputs (x) and constants need 32 bytes together, the limit is 24 bytes (relayfarm.limits.max-total-bytes)", total.getMessage());
    }
}
