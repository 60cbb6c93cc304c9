package dev.relayfarm.vta.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.relayfarm.frontend.OnnxTestData;
import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.pipeline.ModelSource;
import dev.relayfarm.pipeline.Stages;
import dev.relayfarm.quantize.QuantizeConfig;
import dev.relayfarm.quantize.Quantizer;
import dev.relayfarm.vta.VtaConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The quantized mnist8 (ONNX model zoo mnist-8 from {@code ../shared/onnx/models}; skipped without it), calibrated on
 * 16 seeded uniform-noise inputs, with its int8 conv2d / dense layers on the accelerator SIMULATOR and the rest
 * (input quantize, max-pool, reshape, dequantize) in the interpreter: the output equals the all-CPU int8 result
 * bit for bit.
 */
class MnistOffloadTest {
    static Optional<IRModule> model() {
        Optional<Path> dir = OnnxTestData.models().map(d -> d.resolve("mnist8_cntk")).filter(Files::isDirectory);
        return dir.map(d -> {
            try {
                return Stages.inferTypes(Stages.importModel(ModelSource.read(d.resolve("model.onnx")), ""));
            } catch (Exception e) {
                throw new IllegalStateException("cannot import " + d, e);
            }
        });
    }

    static NDArray noise(long seed) {
        Random r = new Random(seed);
        float[] v = new float[28 * 28];
        for (int i = 0; i < v.length; i++) v[i] = r.nextFloat();
        return NDArray.wrap(DType.FLOAT32, new int[] {1, 1, 28, 28}, v);
    }

    /** mnist8 realized with every conv int8 ({@code allLayers}) or the first conv left float (the default). */
    static IRModule quantized(IRModule model, boolean allLayers) {
        List<List<NDArray>> calibration = new ArrayList<>();
        for (long s = 0; s < 16; s++) calibration.add(List.of(noise(s)));
        QuantizeConfig cfg = allLayers ? QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of()) : QuantizeConfig.DEFAULT;
        return Quantizer.quantize(model, calibration, cfg).module();
    }

    @Test
    void offloadedMnist8EqualsTheCpuInt8ResultBitForBit() {
        Optional<IRModule> model = model();
        assumeTrue(model.isPresent(), "../shared/onnx/models/mnist8_cntk is absent: skipped");
        for (boolean allLayers : new boolean[] {true, false}) {
            IRModule q = quantized(model.get(), allLayers);
            OffloadedModule off = OffloadedModule.compile(q, VtaConfig.defaults(), l -> VtaScheduleSpace.defaultSchedule(l, VtaConfig.defaults()));
            // all layers: conv 1→8 (uint8 out), conv 8→16 (uint8 in and out), dense 256→10 (int32 out); else the second conv and the dense
            List<String> names = off.lowered().stream().map(l -> l.layer().name()).toList();
            assertEquals(allLayers ? List.of("conv2d#0", "conv2d#1", "dense#0") : List.of("conv2d#1", "dense#0"), names);
            for (long seed = 100; seed < 104; seed++) {
                NDArray x = noise(seed);
                NDArray want = ((TensorValue) Interpreter.runMain(q, x)).data();
                OffloadedModule.Result r = off.run(x);
                assertEquals(names.size(), r.calls().size(), "every offloaded layer ran on the simulator");
                assertTrue(((TensorValue) r.value()).data().contentEquals(want), "input " + seed + " (all layers " + allLayers + "): offloaded != CPU int8");
            }
        }
    }
}
