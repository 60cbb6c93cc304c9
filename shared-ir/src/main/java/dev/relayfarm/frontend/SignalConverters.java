package dev.relayfarm.frontend;

import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.NDArray;
import java.util.List;
import java.util.function.DoubleUnaryOperator;

/**
 * ONNX window generators (HannWindow, HammingWindow, BlackmanWindow): the window length is an
 * input that must be constant, so each window is computed at import time as a constant. With
 * {@code periodic=1} (the default) the window has period {@code size} (for spectral analysis),
 * else it is symmetric with period {@code size - 1}. MelWeightMatrix, whose inputs must be constants
 * too, is likewise computed at import time.
 */
final class SignalConverters {
    private SignalConverters() {}

    static void register(OnnxConverters.Builder b) {
        // Each formula takes the phase 2*pi*n/N.
        window(b, "HannWindow", p -> 0.5 - 0.5 * Math.cos(p));
        window(b, "HammingWindow", p -> 25.0 / 46 - 21.0 / 46 * Math.cos(p));
        window(b, "BlackmanWindow", p -> 0.42 - 0.5 * Math.cos(p) + 0.08 * Math.cos(2 * p));
        b.add("MelWeightMatrix", SignalConverters::melWeightMatrix);
    }

    private static double scalarInput(OnnxNode n, int i, String what) {
        NDArray a = n.requireConstant(i, what);
        if (a.elementCount() != 1) throw n.unsupported(what + " must hold one value, got " + a.elementCount());
        return a.getDouble(0);
    }

    /**
     * MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz):
     * [⌊dft_length/2⌋ + 1, num_mel_bins] triangles with peak 1. As ONNX's reference: num_mel_bins + 2
     * points evenly spaced in mel(f) = 2595·log10(1 + f/700) from the lower to the upper edge (step:
     * the range over num_mel_bins + 2), mapped back to hertz and to spectrogram bins
     * ⌊(dft_length + 1)·f / sample_rate⌋; band i rises from point i to point i + 1 (a single 1 when they
     * coincide) and falls until point i + 2.
     */
    private static List<dev.relayfarm.ir.Expr> melWeightMatrix(OnnxNode n) {
        long mels = (long) scalarInput(n, 0, "num_mel_bins"), dft = (long) scalarInput(n, 1, "dft_length"), rate = (long) scalarInput(n, 2, "sample_rate");
        double lower = scalarInput(n, 3, "lower_edge_hertz"), upper = scalarInput(n, 4, "upper_edge_hertz");
        if (mels < 1 || dft < 1 || rate < 1) throw n.unsupported("num_mel_bins, dft_length and sample_rate must be positive, got " + mels + ", " + dft + ", " + rate);
        if (!(lower >= 0 && lower < upper)) throw n.unsupported("the edges must satisfy 0 <= lower_edge_hertz < upper_edge_hertz, got " + lower + " and " + upper);
        DType dtype = OnnxDTypes.require((int) n.attrInt("output_datatype", 1), n.where() + ": attribute 'output_datatype'");
        int rows = Math.toIntExact(dft / 2 + 1), cols = Math.toIntExact(mels);
        double lowMel = 2595 * Math.log10(1 + lower / 700), highMel = 2595 * Math.log10(1 + upper / 700);
        double step = (highMel - lowMel) / (mels + 2);
        long[] bin = new long[cols + 2];
        for (int i = 0; i < bin.length; i++) {
            double hz = 700 * (Math.pow(10, (i * step + lowMel) / 2595) - 1);
            bin[i] = (long) Math.floor((dft + 1) * hz / rate);
        }
        NDArray w = NDArray.zeros(dtype, rows, cols);
        for (int i = 0; i < cols; i++) {
            long left = bin[i], center = bin[i + 1], right = bin[i + 2];
            if (right >= rows) throw n.unsupported("band " + i + " reaches spectrogram bin " + right + " of " + rows + " (upper_edge_hertz above sample_rate / 2?)");
            if (center == left) w.setDouble((int) center * cols + i, 1);
            else for (long j = left; j <= center; j++) w.setDouble((int) j * cols + i, (double) (j - left) / (center - left));
            for (long j = center; j < right; j++) w.setDouble((int) j * cols + i, (double) (right - j) / (right - center));
        }
        return List.of(OnnxNode.constant(w));
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
