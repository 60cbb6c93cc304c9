package dev.relayfarm.vta.compile;

import dev.relayfarm.ir.DType;
import java.util.List;

/**
 * An integer layer the accelerator can run: int8 weights (OIHW; a dense layer's {@code [M, K]} as {@code [M, K, 1, 1]}),
 * int8 or uint8 input, the epilogue in program order and the output element type: int8 / uint8 (the epilogue ends
 * in a requantize and clip, and the store keeps the low 8 bits) or int32 (the raw accumulator, stored as four
 * byte planes).
 *
 * @param name        what reports call the layer, e.g. {@code "conv2d#1"}
 * @param dense       whether the input and output are a dense layer's {@code [N, K]} / {@code [N, M]}
 *                    rather than NCHW with N = 1
 * @param inputDtype  int8 or uint8
 * @param outputDtype int8, uint8 or int32
 */
public record QuantizedLayer(String name, ConvGeometry geometry, boolean dense, byte[] weights, DType inputDtype, List<EpilogueOp> epilogue,
        DType outputDtype) {
    public QuantizedLayer {
        epilogue = List.copyOf(epilogue);
        long expected = (long) geometry.channelsOut() * geometry.channelsIn() * geometry.kernelH() * geometry.kernelW();
        if (weights.length != expected) {
            throw new IllegalArgumentException(name + ": " + weights.length + " weight bytes for " + geometry + ", expected " + expected);
        }
        if (!inputDtype.equals(DType.INT8) && !inputDtype.equals(DType.UINT8)) {
            throw new IllegalArgumentException(name + ": the accelerator reads int8 or uint8 inputs, got " + inputDtype);
        }
        if (!outputDtype.equals(DType.INT8) && !outputDtype.equals(DType.UINT8) && !outputDtype.equals(DType.INT32)) {
            throw new IllegalArgumentException(name + ": the accelerator writes int8, uint8 or int32 outputs, got " + outputDtype);
        }
        if (inputDtype.equals(DType.UINT8)) {
            for (int i = 0; i < weights.length; i++) {
                // a uint8 input runs as two int8 channels whose weights are w and -w (see unsignedInput)
                if (weights[i] == Byte.MIN_VALUE) {
                    throw new IllegalArgumentException(name + ": weight #" + i + " is -128, which a uint8 input cannot use (its split needs -w)");
                }
            }
        }
        weights = weights.clone();
    }

    /** A copy: the record stays immutable. */
    @Override
    public byte[] weights() {
        return weights.clone();
    }

    /**
     * A uint8 input x is split into two int8 channels, {@code x & 127} and {@code -128 · (x >> 7)}, with weights w and
     * -w: {@code (x & 127)·w + (-128·(x >> 7))·(-w) = x·w} exactly, and a zero pad stays zero in both halves.
     */
    public boolean unsignedInput() {
        return inputDtype.equals(DType.UINT8);
    }

    /** Input channels as the GEMM core sees them: doubled for a uint8 input. */
    public int gemmChannelsIn() {
        return unsignedInput() ? 2 * geometry.channelsIn() : geometry.channelsIn();
    }

    public boolean int32Output() {
        return outputDtype.equals(DType.INT32);
    }

    public int[] outputShape() {
        return dense ? new int[] {geometry.height(), geometry.channelsOut()}
                : new int[] {1, geometry.channelsOut(), geometry.outHeight(), geometry.outWidth()};
    }

    public int[] inputShape() {
        return dense ? new int[] {geometry.height(), geometry.channelsIn()}
                : new int[] {1, geometry.channelsIn(), geometry.height(), geometry.width()};
    }

    public byte weight(int co, int ci, int ky, int kx) {
        ConvGeometry g = geometry;
        return weights[((co * g.channelsIn() + ci) * g.kernelH() + ky) * g.kernelW() + kx];
    }
}
