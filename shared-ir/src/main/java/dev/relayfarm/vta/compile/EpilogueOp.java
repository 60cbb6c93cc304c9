package dev.relayfarm.vta.compile;

import java.util.Arrays;

/**
 * One integer operation after the accumulation, in program order, as the realized Relay computes it on the int32
 * accumulator (or, after the requantize, on the narrowed value). Every kind maps onto the simulator's ALU:
 * bias add as a tensor ADD of a constant entry, relu as MAX 0, clip as MAX / MIN immediates, the fixed-point
 * requantize as the exact {@link FixedPointPlan}.
 */
public sealed interface EpilogueOp {

    /** {@code acc[c] += bias[c]} per output channel ({@code nn.bias_add} or {@code add} of an int32 constant). */
    record BiasAdd(int[] bias) implements EpilogueOp {
        public BiasAdd {
            bias = bias.clone();
        }

        @Override
        public int[] bias() {
            return bias.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof BiasAdd b && Arrays.equals(bias, b.bias);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bias);
        }
    }

    /** {@code max(x, 0)}. */
    record Relu() implements EpilogueOp {
    }

    /** {@code min(max(x, lo), hi)}. */
    record Clip(int lo, int hi) implements EpilogueOp {
        public Clip {
            if (lo > hi) {
                throw new IllegalArgumentException("clip range [" + lo + ", " + hi + "] is empty");
            }
        }
    }

    /**
     * Realize's fixed-point requantize per output channel, {@code (int64(x) * m0[c] + 2^(shift[c]-1)) >> shift[c]},
     * whose result the realized program clips to [{@code qmin}, {@code qmax}] right after (that clip is a separate
     * {@link Clip}; the range is here because the exact ALU plan saturates early with it).
     */
    record Requantize(long[] m0, long[] shift, int qmin, int qmax) implements EpilogueOp {
        public Requantize {
            if (m0.length != shift.length) {
                throw new IllegalArgumentException("requantize: " + m0.length + " multipliers but " + shift.length + " shifts");
            }
            m0 = m0.clone();
            shift = shift.clone();
        }

        @Override
        public long[] m0() {
            return m0.clone();
        }

        @Override
        public long[] shift() {
            return shift.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Requantize r && Arrays.equals(m0, r.m0) && Arrays.equals(shift, r.shift) && qmin == r.qmin && qmax == r.qmax;
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(m0) * 31 + Arrays.hashCode(shift);
        }
    }
}
