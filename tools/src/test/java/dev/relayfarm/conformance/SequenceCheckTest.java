package dev.relayfarm.conformance;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.protobuf.Message;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxTensors;
import dev.relayfarm.frontend.proto.Onnx.GraphProto;
import dev.relayfarm.frontend.proto.Onnx.ModelProto;
import dev.relayfarm.frontend.proto.Onnx.NodeProto;
import dev.relayfarm.frontend.proto.Onnx.OperatorSetIdProto;
import dev.relayfarm.frontend.proto.Onnx.OptionalProto;
import dev.relayfarm.frontend.proto.Onnx.SequenceProto;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.frontend.proto.Onnx.TensorShapeProto;
import dev.relayfarm.frontend.proto.Onnx.TypeProto;
import dev.relayfarm.frontend.proto.Onnx.ValueInfoProto;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test folder whose input and outputs are a sequence and an optional (SequenceProto/OptionalProto
 * data files): fed flattened to {@code @main}, compared element by element, through the interpreter
 * and through a compiled artifact (whose flat results are nested back as {@code @main}'s type).
 */
class SequenceCheckTest {
    private static final int F = TensorProto.DataType.FLOAT_VALUE;

    @TempDir
    Path tmp;

    private static TypeProto floatTensor(long... dims) {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder();
        for (long d : dims) s.addDim(TensorShapeProto.Dimension.newBuilder().setDimValue(d));
        return TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(F).setShape(s)).build();
    }

    private static TypeProto floatTensorOfAnyLength() {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder().addDim(TensorShapeProto.Dimension.newBuilder().setDimParam("N"));
        return TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(F).setShape(s)).build();
    }

    private static ValueInfoProto value(String name, TypeProto t) {
        return ValueInfoProto.newBuilder().setName(name).setType(t).build();
    }

    private static TypeProto seq(TypeProto e) {
        return TypeProto.newBuilder().setSequenceType(TypeProto.Sequence.newBuilder().setElemType(e)).build();
    }

    private static TypeProto opt(TypeProto e) {
        return TypeProto.newBuilder().setOptionalType(TypeProto.Optional.newBuilder().setElemType(e)).build();
    }

    private static TensorProto tensor(double... v) {
        return OnnxTensors.fromNDArray(NDArray.fromDoubles(DType.FLOAT32, new int[] {v.length}, v), "");
    }

    private static SequenceProto sequence(TensorProto... ts) {
        return SequenceProto.newBuilder().setElemType(SequenceProto.DataType.TENSOR_VALUE).addAllTensorValues(List.of(ts)).build();
    }

    /**
     * r = s with (t + t) appended; o = Optional(t); inputs s = ([1, 2], [3]), t = [5]. Expected outputs
     * as given.
     */
    private Path folder(SequenceProto expectedR, OptionalProto expectedO) throws IOException {
        return folder(expectedR, expectedO, false);
    }

    /** As above; {@code emptyO}: o is an Optional without input (empty). */
    private Path folder(SequenceProto expectedR, OptionalProto expectedO, boolean emptyO) throws IOException {
        NodeProto.Builder wrap = NodeProto.newBuilder().setOpType("Optional").setName("wrap").addOutput("o");
        if (emptyO) {
            wrap.addAttribute(dev.relayfarm.frontend.proto.Onnx.AttributeProto.newBuilder().setName("type")
                    .setType(dev.relayfarm.frontend.proto.Onnx.AttributeProto.AttributeType.TYPE_PROTO).setTp(floatTensor(1)));
        } else {
            wrap.addInput("t");
        }
        GraphProto g = GraphProto.newBuilder().setName("g")
                .addInput(value("s", seq(floatTensorOfAnyLength()))).addInput(value("t", floatTensor(1)))
                .addNode(NodeProto.newBuilder().setOpType("Add").setName("double").addInput("t").addInput("t").addOutput("tt"))
                .addNode(NodeProto.newBuilder().setOpType("SequenceInsert").setName("append").addInput("s").addInput("tt").addOutput("r"))
                .addNode(wrap)
                .addOutput(value("r", seq(floatTensorOfAnyLength()))).addOutput(value("o", opt(floatTensor(1)))).build();
        ModelProto m = ModelProto.newBuilder().setIrVersion(8).addOpsetImport(OperatorSetIdProto.newBuilder().setVersion(18)).setGraph(g).build();
        Path dir = tmp.resolve("test_seq_" + Files.list(tmp).count());
        Path data = Files.createDirectories(dir.resolve("test_data_set_0"));
        Files.write(dir.resolve("model.onnx"), m.toByteArray());
        write(data.resolve("input_0.pb"), sequence(tensor(1, 2), tensor(3)));
        write(data.resolve("input_1.pb"), tensor(5));
        write(data.resolve("output_0.pb"), expectedR);
        write(data.resolve("output_1.pb"), expectedO);
        return dir;
    }

    private static void write(Path p, Message m) throws IOException {
        Files.write(p, m.toByteArray());
    }

    private static OptionalProto present(TensorProto t) {
        return OptionalProto.newBuilder().setElemType(OptionalProto.DataType.TENSOR_VALUE).setTensorValue(t).build();
    }

    @Test
    void sequenceAndOptionalValuesPassThroughTheInterpreterAndAnArtifact() throws IOException {
        Path dir = folder(sequence(tensor(1, 2), tensor(3), tensor(10)), present(tensor(5)));
        OnnxCheck.Result interp = OnnxCheck.check(dir, OnnxCheck.Options.DEFAULT);
        assertEquals(OnnxCheck.Status.PASS, interp.status(), interp.line());
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: the artifact half skipped");
        OnnxCheck.Options c = new OnnxCheck.Options(ImportOptions.DEFAULT, null, m -> OptPipeline.optimize(m, 3), new CBackend(CompileOptions.host(3), 1));
        OnnxCheck.Result compiled = OnnxCheck.check(dir, c);
        assertEquals(OnnxCheck.Status.PASS, compiled.status(), compiled.line());
    }

    @Test
    void anEmptyOptionalOutputIsAnEmptyTupleThroughAnArtifactToo() throws IOException {
        Path dir = folder(sequence(tensor(1, 2), tensor(3), tensor(10)), OptionalProto.getDefaultInstance(), true);
        OnnxCheck.Result interp = OnnxCheck.check(dir, OnnxCheck.Options.DEFAULT);
        assertEquals(OnnxCheck.Status.PASS, interp.status(), interp.line());
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: the artifact half skipped");
        OnnxCheck.Options c = new OnnxCheck.Options(ImportOptions.DEFAULT, null, m -> OptPipeline.optimize(m, 3), new CBackend(CompileOptions.host(3), 1));
        OnnxCheck.Result compiled = OnnxCheck.check(dir, c);
        assertEquals(OnnxCheck.Status.PASS, compiled.status(), compiled.line());
    }

    @Test
    void aSequenceOfAnotherLengthOrWithOtherNumbersFailsNamingTheElement() throws IOException {
        OnnxCheck.Result shorter = OnnxCheck.check(folder(sequence(tensor(1, 2), tensor(3)), present(tensor(5))), OnnxCheck.Options.DEFAULT);
        assertEquals(OnnxCheck.Status.FAIL, shorter.status(), shorter.line());
        assertEquals("outputs", shorter.group());
        assertTrue(shorter.reason().contains("output 0 has 3 elements, expected 2"), shorter.reason());
        OnnxCheck.Result wrong = OnnxCheck.check(folder(sequence(tensor(1, 2), tensor(3), tensor(11)), present(tensor(5))), OnnxCheck.Options.DEFAULT);
        assertEquals(OnnxCheck.Status.FAIL, wrong.status(), wrong.line());
        assertEquals("numerics", wrong.group());
        assertTrue(wrong.reason().startsWith("output 0 element 2: "), wrong.reason());
    }

    @Test
    void anOptionalThatShouldBeEmptyFails() throws IOException {
        OnnxCheck.Result r = OnnxCheck.check(folder(sequence(tensor(1, 2), tensor(3), tensor(10)), OptionalProto.getDefaultInstance()), OnnxCheck.Options.DEFAULT);
        assertEquals(OnnxCheck.Status.FAIL, r.status(), r.line());
        assertTrue(r.reason().contains("output 1 is present, expected an empty optional"), r.reason());
    }
}
