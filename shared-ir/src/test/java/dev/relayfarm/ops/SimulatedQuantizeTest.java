package dev.relayfarm.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.AttrValue;
import dev.relayfarm.ir.Attrs;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.ops.nn.SimulatedQuantize;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.text.RelayParser;
import dev.relayfarm.types.TypeException;
import dev.relayfarm.types.TypeInference;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code annotation.simulated_quantize}: clip(round(x / s)) * s per tensor or per channel; a zero scale passes through. */
class SimulatedQuantizeTest {
    private static double[] run(NDArray x, NDArray s, Attrs attrs) {
        NDArray out = OpRegistry.get(SimulatedQuantize.NAME).compute(List.of(x, s), attrs).get(0);
        double[] d = new double[out.elementCount()];
        for (int i = 0; i < d.length; i++) d[i] = out.getDouble(i);
        return d;
    }

    @Test
    void kernelByHand() {
        NDArray x = NDArray.fromDoubles(DType.FLOAT32, new int[] {2, 3}, new double[] {0.3, -0.26, 100, 0.125, -0.375, -7});
        // per tensor, s = 0.5, 8 bits: round half away from zero, clipped to [-127, 127] levels
        assertArrayEquals(new double[] {0.5, -0.5, 63.5, 0, -0.5, -7}, run(x, NDArray.scalar(0.5f), Attrs.EMPTY), 1e-6);
        // 4 bits: levels [-7, 7]
        assertArrayEquals(new double[] {0.5, -0.5, 3.5, 0, -0.5, -3.5}, run(x, NDArray.scalar(0.5f), Attrs.of("nbit", AttrValue.of(4L))), 1e-6);
        // per channel along axis 0: rows scaled by 0.1 and 0.25
        NDArray s = NDArray.fromDoubles(DType.FLOAT32, new int[] {2}, new double[] {0.1, 0.25});
        assertArrayEquals(new double[] {0.3, -0.3, 12.7, 0.25, -0.5, -7}, run(x, s, Attrs.of("axis", AttrValue.of(0L)).with("kind", AttrValue.of("weight"))), 1e-6);
        // uncalibrated: the identity
        assertArrayEquals(new double[] {0.3, -0.26, 100, 0.125, -0.375, -7}, run(x, NDArray.scalar(0f), Attrs.EMPTY), 1e-6);
    }

    @Test
    void relationChecksScaleAndKind() {
        TypeInference.infer(RelayParser.parseModule("#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2, 3), float32], %s: Tensor[(2), float32]) {"
                + " annotation.simulated_quantize(%x, %s, kind=\"weight\", axis=0) }", "t"));
        var e = assertThrows(TypeException.class, () -> TypeInference.infer(RelayParser.parseModule("#[version = \"0.0.5\"]\n"
                + "def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(3), float32]) { annotation.simulated_quantize(%x, %s, axis=0) }", "t")));
        assertTrue(e.getMessage().contains("one value per index of axis 0"), e.getMessage());
        assertThrows(RuntimeException.class, () -> SimulatedQuantize.parse(Attrs.of("kind", AttrValue.of("bias"))));
    }
}
