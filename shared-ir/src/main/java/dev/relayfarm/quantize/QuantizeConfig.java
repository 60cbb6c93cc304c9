package dev.relayfarm.quantize;

import java.util.Set;

/**
 * How to quantize, as TVM's {@code qconfig}: which conv2d / dense layers stay float ({@code skipConvLayers}
 * counts the conv2d calls of a function in post-order from 0, so {@code {0}} is the first convolution, TVM's
 * default; {@code skipDenseLayers} likewise, {@code -1} naming the last one), the bit widths, per-channel or
 * per-tensor weight scales, how activation scales are calibrated and how realized programs requantize.
 *
 * @param calibration   how activation scales are chosen (see {@link Calibration.Mode})
 * @param percentile    for {@link Calibration.Mode#PERCENTILE}: the percentile of |x| mapped to the largest level (99.99)
 * @param globalScale   for {@link Calibration.Mode#GLOBAL_SCALE}: every activation's range is [-globalScale, globalScale]
 * @param calibSamples  at most this many calibration inputs are used (64)
 * @param requantize    how an int32 accumulator becomes the next layer's int8 input
 * @param mixedPrecision which activation points get more than {@code nbitActivation} bits
 */
public record QuantizeConfig(
        Set<Integer> skipConvLayers,
        Set<Integer> skipDenseLayers,
        int nbitActivation,
        int nbitWeight,
        boolean perChannelWeights,
        Calibration.Mode calibration,
        double percentile,
        double globalScale,
        int calibSamples,
        Requantize requantize,
        MixedPrecision mixedPrecision) {

    /** Fixed-point: {@code (acc * m0 + 2^(s-1)) >> s} in int64 with a 31-bit multiplier; float: {@code round(float(acc) * m)}. */
    public enum Requantize { FIXED_POINT, FLOAT }

    /**
     * Mixed precision: the {@code points} activation points whose quantization alone disturbs the output most on the
     * calibration inputs ({@link Sensitivity}) get {@code nbit} bits (16-bit tensors) instead of
     * {@code nbitActivation}; {@link #NONE} widens none. Relay's qconfig sets bit widths per kind only; this is the
     * per-layer choice of mixed-precision schemes, ranked by measured sensitivity rather than by hand.
     */
    public record MixedPrecision(int points, int nbit) {
        public static final MixedPrecision NONE = new MixedPrecision(0, 16);

        public MixedPrecision {
            if (points < 0) throw new IllegalArgumentException("mixed precision: the number of widened points must be >= 0, got " + points);
            if (nbit < 9 || nbit > 16) throw new IllegalArgumentException("mixed precision: widened points need 9 to 16 bits (16-bit tensors), got " + nbit);
        }
    }

    public static final QuantizeConfig DEFAULT = new QuantizeConfig(Set.of(0), Set.of(), 8, 8, true, Calibration.Mode.KL,
            99.99, 8.0, 64, Requantize.FIXED_POINT, MixedPrecision.NONE);

    public QuantizeConfig {
        skipConvLayers = Set.copyOf(skipConvLayers);
        skipDenseLayers = Set.copyOf(skipDenseLayers);
        if (nbitActivation < 2 || nbitActivation > 8 || nbitWeight < 2 || nbitWeight > 8) {
            throw new IllegalArgumentException("bit widths must be in [2, 8] (int8 tensors), got activations " + nbitActivation + ", weights " + nbitWeight);
        }
        if (!(percentile > 0 && percentile <= 100)) throw new IllegalArgumentException("percentile must be in (0, 100], got " + percentile);
        if (!(globalScale > 0)) throw new IllegalArgumentException("global scale must be positive, got " + globalScale);
        if (calibSamples < 1 || calibSamples > 64) throw new IllegalArgumentException("calibration samples must be in [1, 64], got " + calibSamples);
    }

    public QuantizeConfig withSkipConvLayers(Set<Integer> layers) {
        return new QuantizeConfig(layers, skipDenseLayers, nbitActivation, nbitWeight, perChannelWeights, calibration, percentile, globalScale, calibSamples, requantize, mixedPrecision);
    }

    public QuantizeConfig withSkipDenseLayers(Set<Integer> layers) {
        return new QuantizeConfig(skipConvLayers, layers, nbitActivation, nbitWeight, perChannelWeights, calibration, percentile, globalScale, calibSamples, requantize, mixedPrecision);
    }

    public QuantizeConfig withCalibration(Calibration.Mode mode) {
        return new QuantizeConfig(skipConvLayers, skipDenseLayers, nbitActivation, nbitWeight, perChannelWeights, mode, percentile, globalScale, calibSamples, requantize, mixedPrecision);
    }

    public QuantizeConfig withPercentile(double p) {
        return new QuantizeConfig(skipConvLayers, skipDenseLayers, nbitActivation, nbitWeight, perChannelWeights, calibration, p, globalScale, calibSamples, requantize, mixedPrecision);
    }

    public QuantizeConfig withGlobalScale(double s) {
        return new QuantizeConfig(skipConvLayers, skipDenseLayers, nbitActivation, nbitWeight, perChannelWeights, calibration, percentile, s, calibSamples, requantize, mixedPrecision);
    }

    public QuantizeConfig withCalibSamples(int n) {
        return new QuantizeConfig(skipConvLayers, skipDenseLayers, nbitActivation, nbitWeight, perChannelWeights, calibration, percentile, globalScale, n, requantize, mixedPrecision);
    }

    public QuantizeConfig withPerChannelWeights(boolean perChannel) {
        return new QuantizeConfig(skipConvLayers, skipDenseLayers, nbitActivation, nbitWeight, perChannel, calibration, percentile, globalScale, calibSamples, requantize, mixedPrecision);
    }

    public QuantizeConfig withRequantize(Requantize r) {
        return new QuantizeConfig(skipConvLayers, skipDenseLayers, nbitActivation, nbitWeight, perChannelWeights, calibration, percentile, globalScale, calibSamples, r, mixedPrecision);
    }

    public QuantizeConfig withMixedPrecision(MixedPrecision m) {
        return new QuantizeConfig(skipConvLayers, skipDenseLayers, nbitActivation, nbitWeight, perChannelWeights, calibration, percentile, globalScale, calibSamples, requantize, m);
    }
}
