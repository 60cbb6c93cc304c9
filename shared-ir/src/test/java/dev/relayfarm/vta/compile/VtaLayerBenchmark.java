package dev.relayfarm.vta.compile;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.vta.VtaConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Per-layer accelerator report, default schedule vs the best of the grid search, in the SIMULATOR's cycle model:
 *
 * <pre>
 * ./mvnw -o -q test -pl shared-ir -Dtest=VtaLayerBenchmark -Drelayfarm.bench=true
 * </pre>
 */
class VtaLayerBenchmark {
    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void defaultVersusSearchedSchedules() {
        VtaConfig config = VtaConfig.defaults();
        List<QuantizedLayer> layers = new ArrayList<>();
        List<NDArray> inputs = new ArrayList<>();
        add(layers, inputs, QuantizedRelay.conv(1, 3, 32, 32, 16, 3, 1, 1, DType.INT8, true, false, 1e-3, 2e-2), "resnet 3→16 3×3", DType.INT8, 1, 3, 32, 32);
        add(layers, inputs, QuantizedRelay.conv(2, 64, 14, 14, 64, 3, 1, 1, DType.INT8, true, true, 1e-4, 5e-3), "64→64 3×3", DType.INT8, 1, 64, 14, 14);
        add(layers, inputs, QuantizedRelay.conv(3, 64, 14, 14, 128, 3, 2, 1, DType.UINT8, false, false, 1e-4, 5e-3), "64→128 s2", DType.UINT8, 1, 64, 14, 14);
        add(layers, inputs, QuantizedRelay.conv(4, 64, 14, 14, 128, 1, 2, 0, DType.INT8, false, false, 1e-3, 1e-2), "64→128 1×1 s2", DType.INT8, 1, 64, 14, 14);
        Optional<IRModule> mnist = MnistOffloadTest.model();
        if (mnist.isPresent()) {
            IRModule q = MnistOffloadTest.quantized(mnist.get(), true);
            OffloadedModule off = OffloadedModule.compile(q, config, l -> VtaScheduleSpace.defaultSchedule(l, config));
            // the layers' real inputs: capture them from one heterogeneous run
            OffloadedModule.Result r = off.run(MnistOffloadTest.noise(100));
            for (int i = 0; i < off.lowered().size(); i++) {
                QuantizedLayer l = off.lowered().get(i).layer();
                layers.add(new QuantizedLayer("mnist8 " + l.name(), l.geometry(), l.dense(), l.weights(), l.inputDtype(), l.epilogue(), l.outputDtype()));
                inputs.add(QuantizedRelay.input(7 + i, l.inputDtype(), l.inputShape()));
            }
            assertTrue(r.calls().size() == off.lowered().size());
        }
        System.out.println("VTA SIMULATOR, default config (1×16×16 GEMM, 8 B/cycle DMA, ALU II 2); per layer: default schedule, then best of the grid");
        System.out.println(LayerReport.header());
        long defaultTotal = 0, bestTotal = 0;
        for (int i = 0; i < layers.size(); i++) {
            ScheduleSearch.Outcome o = ScheduleSearch.search(layers.get(i), config, inputs.get(i));
            System.out.println(o.defaults().row() + "  default");
            System.out.println(o.best().row() + "  best of " + o.tried());
            defaultTotal += o.defaults().cycles();
            bestTotal += o.best().cycles();
            assertTrue(o.best().cycles() <= o.defaults().cycles());
        }
        System.out.printf("total cycles: default %d, searched %d (%.2f×)%n", defaultTotal, bestTotal, (double) defaultTotal / bestTotal);
    }

    private static void add(List<QuantizedLayer> layers, List<NDArray> inputs, IRModule m, String name, DType in, int... shape) {
        QuantizedLayer l = VtaPartition.partition(m).layers().get(0);
        layers.add(new QuantizedLayer(name, l.geometry(), l.dense(), l.weights(), l.inputDtype(), l.epilogue(), l.outputDtype()));
        inputs.add(QuantizedRelay.input(42, in, shape));
    }
}
