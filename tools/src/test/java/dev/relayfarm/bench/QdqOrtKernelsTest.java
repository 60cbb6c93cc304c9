package dev.relayfarm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.NDArray;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ONNX Runtime runs our QDQ export of mnist8 on its int8 kernels, not on float ops between Q and DQ: in the graph its
 * optimizer leaves (dumped with {@code setOptimizedModelFilePath}), every conv we quantized is a QLinearConv and the
 * dense layer an integer matrix product; and its int8 outputs pick our int8 program's class.
 */
class QdqOrtKernelsTest {
    @TempDir
    Path tmp;

    @Test
    void ortFusesTheExportedGroupsIntoInt8Kernels() {
        QdqCase mnist = QdqCase.available().stream().filter(c -> c.name().equals("mnist8")).findFirst().orElse(null);
        assumeTrue(mnist != null, "../shared/onnx/models/mnist8_cntk is absent: skipped");
        QdqCase.Prepared p = mnist.prepare(tmp);
        assertEquals(1, p.exported().quantizedConvs(), "the default config keeps the first conv float");
        Map<String, Integer> kernels = QdqCase.ortKernels(p.qdq(), 1, tmp.resolve("mnist8-qdq-ort.onnx"));
        System.out.println("mnist8 QDQ, ORT's optimized graph: " + kernels);
        assertEquals(p.exported().quantizedConvs(), QdqCase.int8Convs(kernels), "ORT's kernels: " + kernels);
        assertEquals(p.exported().quantizedMatMuls(), QdqCase.int8MatMuls(kernels), "ORT's kernels: " + kernels);
        int agree = 0;
        try (OrtRunner ort = OrtRunner.open(p.qdq(), 1)) {
            for (long s = 10_000; s < 10_050; s++) {
                NDArray x = mnist.check().apply(s);
                NDArray ours = ((TensorValue) Interpreter.runMain(p.quantized().module(), x)).data();
                if (argmax(ours) == argmax(ort.run(List.of(x)).getFirst())) agree++;
            }
        }
        // same scales, ORT's own rounding (u8 zero point 128 on the signed input, its requantize): a close logit may flip
        assertTrue(agree >= 48, "ORT's int8 picks our int8 program's class on " + agree + " of 50");
    }

    /**
     * The same export compiled by us with {@code relayc compile --quantize qdq}: its pairs and int8 weights on our
     * integer kernels, not float arithmetic, and the artifact picks our int8 program's class as ORT does.
     */
    @Test
    void ourCompilerRunsTheExportOnIntegerKernels() {
        assumeTrue(dev.relayfarm.kernel.codegen.CCompiler.host().isPresent(), "no C compiler: skipped");
        QdqCase mnist = QdqCase.available().stream().filter(c -> c.name().equals("mnist8")).findFirst().orElse(null);
        assumeTrue(mnist != null, "../shared/onnx/models/mnist8_cntk is absent: skipped");
        QdqCase.Prepared p = mnist.prepare(tmp);
        Path integer = tmp.resolve("qdq-int"), asFloat = tmp.resolve("qdq-float");
        java.io.StringWriter out = new java.io.StringWriter();
        picocli.CommandLine cli = dev.relayfarm.cli.Relayc.commandLine();
        cli.setOut(new java.io.PrintWriter(out, true));
        assertEquals(0, cli.execute("compile", p.qdq().toString(), "--quantize", "qdq", "-o", integer.toString()), out.toString());
        assertTrue(out.toString().contains("the model's QDQ quantization"), out.toString());
        assertEquals(0, dev.relayfarm.cli.Relayc.commandLine().execute("compile", p.qdq().toString(), "-o", asFloat.toString()));
        try {
            // our integer program's int8 weights are params; the float reading folds them into float32 constants
            assertTrue(java.nio.file.Files.readString(integer.resolve("manifest.json")).contains("\"int8\""), "no int8 param");
            assertFalse(java.nio.file.Files.readString(asFloat.resolve("manifest.json")).contains("\"int8\""), "the float reading has int8 params");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        int agree = 0;
        try (dev.relayfarm.runtime.CompiledModel m = dev.relayfarm.runtime.CompiledModel.load(integer)) {
            for (long s = 10_000; s < 10_050; s++) {
                NDArray x = mnist.check().apply(s);
                NDArray ours = ((TensorValue) Interpreter.runMain(p.quantized().module(), x)).data();
                if (argmax(ours) == argmax(m.run(List.of(x)).getFirst())) agree++;
            }
        }
        assertTrue(agree >= 48, "our QDQ integer artifact picks our int8 program's class on " + agree + " of 50");
    }

    static int argmax(NDArray a) {
        int best = 0;
        for (int i = 1; i < a.elementCount(); i++) if (a.getDouble(i) > a.getDouble(best)) best = i;
        return best;
    }
}
