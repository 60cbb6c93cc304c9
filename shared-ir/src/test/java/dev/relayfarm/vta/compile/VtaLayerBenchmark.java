package dev.relayfarm.vta.compile;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.vta.VtaConfig;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Per-layer accelerator report, default schedule vs the best of the grid search, in the SIMULATOR's cycle model, for
 * ResNet-style layers and the quantized mnist8 (when ../shared has it):
 *
 * <pre>
 * ./mvnw -o -q test -pl shared-ir -Dtest=VtaLayerBenchmark -Drelayfarm.bench=true
 * </pre>
 */
class VtaLayerBenchmark {
    private record Case(IRModule module, NDArray input) {
    }

    @Test
    @EnabledIfSystemProperty(named = "relayfarm.bench", matches = "true")
    void defaultVersusSearchedSchedules() {
        VtaConfig config = VtaConfig.defaults();
        Map<String, Case> cases = new LinkedHashMap<>();
        cases.put("resnet stem-like 3→16 3×3 at 32×32", new Case(QuantizedRelay.conv(1, 3, 32, 32, 16, 3, 1, 1, DType.INT8, true, false, 1e-3, 2e-2),
                QuantizedRelay.input(42, DType.INT8, 1, 3, 32, 32)));
        cases.put("resnet 64→64 3×3 at 14×14", new Case(QuantizedRelay.conv(2, 64, 14, 14, 64, 3, 1, 1, DType.INT8, true, true, 1e-4, 5e-3),
                QuantizedRelay.input(42, DType.INT8, 1, 64, 14, 14)));
        cases.put("resnet 64→128 3×3 stride 2", new Case(QuantizedRelay.conv(3, 64, 14, 14, 128, 3, 2, 1, DType.UINT8, false, false, 1e-4, 5e-3),
                QuantizedRelay.input(42, DType.UINT8, 1, 64, 14, 14)));
        cases.put("resnet 64→128 1×1 stride 2", new Case(QuantizedRelay.conv(4, 64, 14, 14, 128, 1, 2, 0, DType.INT8, false, false, 1e-3, 1e-2),
                QuantizedRelay.input(42, DType.INT8, 1, 64, 14, 14)));
        Optional<IRModule> mnist = MnistOffloadTest.model();
        mnist.ifPresent(m -> cases.put("mnist8, every layer int8", new Case(MnistOffloadTest.quantized(m, true), MnistOffloadTest.noise(100))));
        System.out.println("VTA SIMULATOR, default config (1×16×16 GEMM, 8 B/cycle DMA, no DMA latency, ALU II 2)");
        long byDefault = 0, searched = 0;
        for (Map.Entry<String, Case> e : cases.entrySet()) {
            VtaModelReport r = VtaModelReport.measure(e.getValue().module(), config, true, e.getValue().input());
            System.out.println("== " + e.getKey());
            System.out.print(r.table());
            assertTrue(r.bitExact(), e.getKey() + ": offloaded result differs from the CPU int8 result");
            assertTrue(r.layers().stream().allMatch(o -> o.tried() > 1), e.getKey() + ": every layer's schedule space has more than its default");
            byDefault += r.defaultCycles();
            searched += r.bestCycles();
        }
        System.out.printf("all: default %d cycles, searched %d (%.3f×)%n", byDefault, searched, (double) byDefault / searched);
    }
}
