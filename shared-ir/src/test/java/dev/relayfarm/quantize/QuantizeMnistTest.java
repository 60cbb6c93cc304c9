package dev.relayfarm.quantize;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.compile.ArtifactCompiler;
import dev.relayfarm.compile.CompileOptions;
import dev.relayfarm.frontend.OnnxTensors;
import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.frontend.proto.Onnx.TensorProto;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ir.Op;
import dev.relayfarm.kernel.codegen.CCompiler;
import dev.relayfarm.passes.OptPipeline;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.runtime.CompiledModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The accuracy check of issue 21 on mnist8 (ONNX model zoo mnist-8, from {@code ../shared/onnx/models}; skipped
 * without it): quantized to int8 with per-channel weights, calibrated on 64 inputs, the int8 program picks the
 * float program's class on at least 99% of 200 other seeded inputs — through the interpreter and through the
 * compiled C artifact. There is no MNIST data here, so two seeded families: digit-like images (bright strokes on a
 * dark background) and uniform noise like the model's shipped test input (whose logits lie close together: 5% of
 * them within 0.035, the hard case; signed int8 activations managed 191-196 of 200 there, the unsigned post-relu
 * points 199).
 */
class QuantizeMnistTest {
    private static IRModule model;
    private static NDArray shipped;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void load() throws Exception {
        Optional<Path> dir = OnnxTestData.models().map(d -> d.resolve("mnist8_cntk")).filter(Files::isDirectory);
        assumeTrue(dir.isPresent(), "../shared/onnx/models/mnist8_cntk is absent: skipped");
        model = Stages.inferTypes(Stages.importModel(ModelSource.read(dir.get().resolve("model.onnx")), ""));
        Path in = dir.get().resolve("test_data_set_0/input_0.pb");
        shipped = OnnxTensors.toNDArray(TensorProto.parseFrom(Files.readAllBytes(in)), in.getParent(), in.toString());
    }

    /** The two input families: digit-like strokes on a dark background, and noise like the shipped input. */
    enum Family { DIGITS, NOISE }

    /** Input {@code seed} of a family ({@link DigitImages}); seed 0 is the shipped input in both. */
    static NDArray input(Family family, long seed) {
        return seed == 0 ? shipped : DigitImages.image(family == Family.DIGITS, seed);
    }

    /** 64 calibration inputs (seeds 0-63); evaluation uses seeds 10,000-10,199. */
    static List<List<NDArray>> calibrationSet(Family f) {
        List<List<NDArray>> c = new ArrayList<>();
        for (long s = 0; s < 64; s++) c.add(List.of(input(f, s)));
        return c;
    }

    static int argmax(NDArray a) {
        int best = 0;
        for (int i = 1; i < a.elementCount(); i++) if (a.getDouble(i) > a.getDouble(best)) best = i;
        return best;
    }

    private static int[] floatClasses(Family f) {
        int[] c = new int[200];
        for (int i = 0; i < 200; i++) c[i] = argmax(((TensorValue) Interpreter.runMain(model, input(f, 10_000 + i))).data());
        return c;
    }

    private static int agreement(IRModule quantized, Family f, int[] want) {
        int agree = 0;
        for (int i = 0; i < 200; i++) {
            if (argmax(((TensorValue) Interpreter.runMain(quantized, input(f, 10_000 + i))).data()) == want[i]) agree++;
        }
        return agree;
    }

    /** Calls of {@code op} in {@code m}'s @main whose {@code out_dtype} is {@code outDtype} (what realize makes of the anchors). */
    static long count(IRModule m, String op, String outDtype) {
        long n = 0;
        for (Expr e : ExprTraversal.postOrder(m.main().orElseThrow().body())) {
            if (e instanceof Call c && c.callee() instanceof Op o && o.name().equals(op)
                    && c.attrs().get("out_dtype").map(v -> v.toString().contains(outDtype)).orElse(false)) n++;
        }
        return n;
    }

    @ParameterizedTest
    @EnumSource(Family.class)
    void int8AgreesWithFloatOnTop1ThroughTheInterpreter(Family family) {
        int[] want = floatClasses(family);
        System.out.println("mnist8 " + family + ": float top-1 over 200 inputs spans " + java.util.Arrays.stream(want).distinct().count() + " classes");
        for (Calibration.Mode mode : List.of(Calibration.Mode.KL, Calibration.Mode.MINMAX, Calibration.Mode.PERCENTILE)) {
            Quantizer.Result q = Quantizer.quantize(model, calibrationSet(family), QuantizeConfig.DEFAULT.withCalibration(mode));
            // skip_conv_layers=[0]: the second conv and the dense run 8-bit x int8 -> int32
            assertEquals(1, count(q.module(), "nn.conv2d", "int32"));
            assertEquals(1, count(q.module(), "nn.dense", "int32"));
            int agree = agreement(q.module(), family, want);
            System.out.println("mnist8 " + family + " int8 (" + mode + ", first conv float): top-1 agreement " + agree + "/200");
            assertTrue(agree >= 198, family + " " + mode + ": top-1 agreement " + agree + "/200 < 99%");
        }
        // every layer int8 (no skip), held to the same bar
        Quantizer.Result all = Quantizer.quantize(model, calibrationSet(family), QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of()));
        assertEquals(2, count(all.module(), "nn.conv2d", "int32"));
        int agree = agreement(all.module(), family, want);
        System.out.println("mnist8 " + family + " int8 (KL, all layers): top-1 agreement " + agree + "/200");
        assertTrue(agree >= 198, family + " all layers: top-1 agreement " + agree + "/200 < 99%");
    }

    /**
     * The compiled artifact: top-1 agreement with float as through the interpreter. With every layer integer (the
     * input quantized by float32 divide and round, then integers, then one float multiply) it computes the int8
     * interpreter's numbers bit for bit; with the first conv left float, the C kernel's float summation order moves
     * a value across a rounding boundary now and then (one level at the next point), so only top-1 is compared there.
     */
    @ParameterizedTest
    @EnumSource(Family.class)
    void compiledInt8ArtifactAgreesWithFloat(Family family) {
        assumeTrue(CCompiler.host().isPresent(), "no C compiler: skipped");
        int[] want = floatClasses(family);
        for (boolean allLayers : new boolean[] {false, true}) {
            QuantizeConfig cfg = allLayers ? QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of()) : QuantizeConfig.DEFAULT;
            Quantizer.Result q = Quantizer.quantize(model, calibrationSet(family), cfg);
            ArtifactCompiler.Artifact art = ArtifactCompiler.compile(OptPipeline.optimize(q.module(), 3), CompileOptions.host(3),
                    tmp.resolve("mnist8-int8-" + family + "-" + allLayers));
            int agree = 0, exact = 0;
            try (CompiledModel cm = CompiledModel.load(art.dir())) {
                cm.setNumThreads(1);
                for (int i = 0; i < 200; i++) {
                    NDArray x = input(family, 10_000 + i);
                    NDArray got = cm.run(List.of(x)).get(0);
                    if (argmax(got) == want[i]) agree++;
                    if (got.contentEquals(((TensorValue) Interpreter.runMain(q.module(), x)).data())) exact++;
                }
            }
            String what = allLayers ? "all layers" : "first conv float";
            System.out.println("mnist8 " + family + " int8 compiled (" + what + "): top-1 agreement with float " + agree
                    + "/200; bit-equal to the int8 interpreter on " + exact + "/200");
            assertTrue(agree >= 198, "compiled int8 (" + what + "): top-1 agreement " + agree + "/200 < 99%");
            if (allLayers) assertEquals(200, exact, "an all-integer program computes the same numbers compiled and interpreted");
        }
    }
}
