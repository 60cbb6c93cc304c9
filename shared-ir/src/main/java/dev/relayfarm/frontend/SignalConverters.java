package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import java.util.function.DoubleUnaryOperator;

/**
 * ONNX window generators (HannWindow, HammingWindow, BlackmanWindow): the window length is an
 * input that must be constant, so each window is computed at import time as a constant. With
 * {@code periodic=1} (the default) the window has period {@code size} (for spectral analysis),
 * else it is symmetric with period {@code size - 1}.
 */
final class SignalConverters {
    private SignalConverters() {}

    static void register(OnnxConverters.Builder b) {
        // Each formula takes the phase 2*pi*n/N.
        window(b, "HannWindow", p -> 0.5 - 0.5 * Math.cos(p));
        window(b, "HammingWindow", p -> 25.0 / 46 - 21.0 / 46 * Math.cos(p));
        window(b, "BlackmanWindow", p -> 0.42 - 0.5 * Math.cos(p) + 0.08 * Math.cos(2 * p));
    }

    private static void window(OnnxConverters.Builder b, String op, DoubleUnaryOperator formula) {
        b.add(op, n -> {
            long[] sizeValue = n.constantInts(0, "size");
            if (sizeValue.length != 1) throw n.unsupported("size must hold one value, got " + sizeValue.length);
            int size = Math.toIntExact(sizeValue[0]);
            if (size < 0) throw n.unsupported("size must be >= 0, got " + size);
            boolean periodic = n.attrInt("periodic", 1) != 0;
            DType dtype = OnnxDTypes.require((int) n.attrInt("output_datatype", 1), n.where() + ": attribute 'output_datatype'");
            double period = periodic ? size : size - 1;
            NDArray w = NDArray.zeros(dtype, size);
            for (int i = 0; i < size; i++) w.setDouble(i, period == 0 ? 1 : formula.applyAsDouble(2 * Math.PI * i / period));
            return List.of(OnnxNode.constant(w));
        });
    }
}
