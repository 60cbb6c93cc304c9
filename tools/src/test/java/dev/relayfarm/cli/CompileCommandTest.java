package dev.relayfarm.cli;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.interp.Npy;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.runtime.CompiledModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CompileCommandTest {
    @TempDir
    Path tmp;

    private Path relay() throws Exception {
        Path f = tmp.resolve("m.relay");
        Files.writeString(f, """
                #[version = "0.0.5"]
                def @main(%x: Tensor[(3, 4), float32]) {
                  %0 = exp(%x);
                  %1 = nn.relu(%0);
                  add(%1, %x)
                }
                """);
        return f;
    }

    @Test
    void winogradOffLeavesTheThreeByThreeConvolutionDirect() throws Exception {
        assumeTrue(CCompiler.host().isPresent());
        Path f = tmp.resolve("conv.relay");
        Files.writeString(f, """
                #[version = "0.0.5"]
                def @main(%x: Tensor[(1, 32, 8, 8), float32]) {
                  nn.conv2d(%x, ones(shape=[32, 32, 3, 3], dtype="float32"), padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3])
                }
                """);
        Path on = tmp.resolve("on"), off = tmp.resolve("off");
        assertEquals(0, CliRun.relayc("compile", f.toString(), "-o", on.toString()).exitCode());
        CliRun r = CliRun.relayc("compile", f.toString(), "--winograd", "off", "-o", off.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(Files.readString(on.resolve("manifest.json")).contains("winograd"), "on by default at -O3");
        assertFalse(Files.readString(off.resolve("manifest.json")).contains("winograd"), "--winograd off disables the pass");
        CliRun bad = CliRun.relayc("compile", f.toString(), "--winograd", "maybe", "-o", tmp.resolve("x").toString());
        assertNotEquals(0, bad.exitCode());
        assertTrue(bad.err().contains("--winograd must be on or off, got maybe"), bad.err());
    }

    @Test
    void compilesARelayFileToAnArtifactThatRuns() throws Exception {
        assumeTrue(CCompiler.host().isPresent());
        Path out = tmp.resolve("art");
        CliRun r = CliRun.relayc("compile", relay().toString(), "--target", "c -mcpu=native", "-O3", "-o", out.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("content hash"), r.out());
        for (String f : List.of("manifest.json", "lib.so", "params.bin", "src/kernels.c", "src/entry.c")) assertTrue(Files.isRegularFile(out.resolve(f)), f);
        try (CompiledModel m = CompiledModel.load(out)) {
            NDArray x = NDArray.zeros(DType.FLOAT32, 3, 4);
            x.setDouble(5, 1.0);
            NDArray y = m.run(List.of(x)).getFirst();
            assertEquals(1.0, y.getDouble(0), 1e-6);
            assertEquals(Math.E + 1.0, y.getDouble(5), 1e-5);
        }
    }

    @Test
    void theExampleModelCompilesAndRunsLikeTheInterpreter() throws Exception {
        assumeTrue(CCompiler.host().isPresent());
        Path example = Path.of("../examples/mlp.relay");
        Path art = tmp.resolve("mlp");
        assertEquals(0, CliRun.relayc("compile", example.toString(), "-o", art.toString()).exitCode());
        CliRun nat = CliRun.relayc("run", art.toString(), "--random", "--out", tmp.resolve("nat").toString());
        assertEquals(0, nat.exitCode(), nat.err());
        assertTrue(nat.out().contains("natively"), nat.out());
        assertFalse(nat.out().contains("median"), "extra timed calls only when asked: " + nat.out());
        CliRun timed = CliRun.relayc("run", art.toString(), "--random", "--repeat", "3");
        assertEquals(0, timed.exitCode(), timed.err());
        assertTrue(timed.out().contains("then median") && timed.out().contains("over 3 calls"), timed.out());
        CliRun ref = CliRun.relayc("run", example.toString(), "--random", "--out", tmp.resolve("ref").toString());
        assertEquals(0, ref.exitCode(), ref.err());
        float[] a = Npy.read(tmp.resolve("nat/output_0.npy")).floatData();
        float[] b = Npy.read(tmp.resolve("ref/output_0.npy")).floatData();
        assertEquals(b.length, a.length);
        for (int i = 0; i < a.length; i++) assertEquals(b[i], a[i], 1e-5 + 1e-4 * Math.abs(b[i]), "output " + i);
        CliRun missing = CliRun.relayc("run", art.toString());
        assertEquals(1, missing.exitCode());
        assertTrue(missing.err().contains("needs --arg x=FILE.npy (float32 [1, 784]); or --random"), missing.err());
        CliRun notArtifact = CliRun.relayc("run", tmp.toString());
        assertEquals(1, notArtifact.exitCode());
        assertTrue(notArtifact.err().contains("not an artifact (no manifest.json)"), notArtifact.err());
    }

    /**
     * {@code --quantize int8} on mnist8: the model quantized before optimizing, on int8 kernels, its logits close to
     * the float artifact's on a seeded input like its calibration inputs; a calibration option
     * without it, or another precision, is a user error.
     */
    @Test
    void quantizeInt8CompilesTheIntegerProgram() throws Exception {
        assumeTrue(CCompiler.host().isPresent());
        var model = dev.relayfarm.frontend.OnnxTestData.models().map(d -> d.resolve("mnist8_cntk/model.onnx")).filter(Files::isRegularFile);
        assumeTrue(model.isPresent(), "../shared/onnx/models/mnist8_cntk is absent: skipped");
        Path example = model.get();
        Path f32 = tmp.resolve("mnist-f32"), int8 = tmp.resolve("mnist-int8");
        assertEquals(0, CliRun.relayc("compile", example.toString(), "-o", f32.toString()).exitCode());
        CliRun q = CliRun.relayc("compile", example.toString(), "-o", int8.toString(), "--quantize", "int8", "--calibration", "minmax", "--calib-samples", "16");
        assertEquals(0, q.exitCode(), q.err());
        assertTrue(q.out().contains("quantized (int8): minmax calibration"), q.out());
        // the quantized weights are int8 params of the artifact
        assertTrue(Files.readString(int8.resolve("manifest.json")).contains("\"int8\""), "no int8 param");
        assertFalse(Files.readString(f32.resolve("manifest.json")).contains("\"int8\""));
        // 8-bit activations and weights through three layers (the first conv float): within a tenth of the logits' range
        double off = offFromFloat(f32, int8, 7);
        assertTrue(off <= 0.1, "int8 differs from float by " + off + " of the logits' range");
        // mixed precision through to native code: the most sensitive point's int16 tensor feeds an int8-weight conv
        Path mixed = tmp.resolve("mnist-mixed");
        CliRun mp = CliRun.relayc("compile", example.toString(), "-o", mixed.toString(), "--quantize", "int8", "--calibration", "minmax",
                "--calib-samples", "16", "--mixed-precision", "1");
        assertEquals(0, mp.exitCode(), mp.err());
        assertTrue(mp.out().contains("1 of them 16-bit tensors"), mp.out());
        double mixedOff = offFromFloat(f32, mixed, 8);
        assertTrue(mixedOff <= 0.1, "mixed precision differs from float by " + mixedOff + " of the logits' range");
        // a float model has no QDQ pairs to run on integers
        CliRun noPairs = CliRun.relayc("compile", example.toString(), "-o", tmp.resolve("z").toString(), "--quantize", "qdq");
        assertEquals(2, noPairs.exitCode());
        assertTrue(noPairs.err().contains("has no QuantizeLinear -> DequantizeLinear pair"), noPairs.err());
        CliRun stray = CliRun.relayc("compile", example.toString(), "-o", tmp.resolve("x").toString(), "--calibration", "kl");
        assertEquals(2, stray.exitCode());
        assertTrue(stray.err().contains("--calibration is a calibration option: it needs --quantize int8"), stray.err());
        CliRun int4 = CliRun.relayc("compile", example.toString(), "-o", tmp.resolve("y").toString(), "--quantize", "int4");
        assertEquals(2, int4.exitCode());
        assertTrue(int4.err().contains("--quantize must be int8 or qdq, got 'int4'"), int4.err());
    }

    /** The largest difference between two artifacts' outputs on a seeded uniform input, over the first one's largest |output|. */
    private static double offFromFloat(Path reference, Path other, long seed) {
        try (CompiledModel a = CompiledModel.load(reference); CompiledModel b = CompiledModel.load(other)) {
            java.util.Random r = new java.util.Random(seed);
            NDArray x = NDArray.zeros(DType.FLOAT32, a.inputs().getFirst().shape().stream().mapToInt(Integer::intValue).toArray());
            for (int i = 0; i < x.elementCount(); i++) x.setDouble(i, r.nextDouble());
            NDArray want = a.run(List.of(x)).getFirst(), got = b.run(List.of(x)).getFirst();
            double range = 0, diff = 0;
            for (int i = 0; i < want.elementCount(); i++) {
                range = Math.max(range, Math.abs(want.getDouble(i)));
                diff = Math.max(diff, Math.abs(want.getDouble(i) - got.getDouble(i)));
            }
            return diff / range;
        }
    }

    @Test
    void badTargetAndLevelAreClearErrors() throws Exception {
        CliRun r = CliRun.relayc("compile", relay().toString(), "--target", "c -mcpu=pentium9", "-o", tmp.resolve("x").toString());
        assertEquals(2, r.exitCode());
        assertTrue(r.err().contains("unknown CPU '-mcpu=pentium9'"), r.err());
        CliRun o0 = CliRun.relayc("compile", relay().toString(), "-O0", "-o", tmp.resolve("y").toString());
        assertEquals(2, o0.exitCode());
        assertTrue(o0.err().contains("-O must be 1..3"), o0.err());
    }

    @Test
    void crossTargetSaysSourcesOnly() throws Exception {
        assumeTrue(CCompiler.host().isPresent() && CCompiler.forTarget(dev.relayfarm.kernel.target.Target.parse("c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72")).isEmpty());
        Path out = tmp.resolve("arm");
        CliRun r = CliRun.relayc("compile", relay().toString(), "--target", "c -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", "-o", out.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("note: no cross compiler for aarch64-linux-gnu"), r.out());
        assertTrue(Files.isRegularFile(out.resolve("src/kernels.c")));
        assertFalse(Files.exists(out.resolve("lib.so")));
    }
}
