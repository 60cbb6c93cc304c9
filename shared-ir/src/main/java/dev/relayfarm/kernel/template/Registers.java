package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.target.Target;

/**
 * The vector register file a register tile is budgeted for: float32 {@code lanes} per register and how many registers
 * there are. The blocked convolution templates count a tile's accumulators in these registers: a 16-channel block is two
 * registers on AVX2 and one on AVX-512, so the same tile that fills AVX2's sixteen registers leaves an AVX-512 core
 * waiting on its FMA latency (4 or 5 accumulators of 4-cycle FMAs, one issued per cycle).
 *
 * <p>Templates made without a target budget {@link #AVX2}'s file, what the schedules and tests before this had.
 */
public record Registers(int lanes, int count) {
    /** Sixteen registers of eight floats (AVX2; also what SSE2 and NEON tiles are budgeted as, half-filled). */
    public static final Registers AVX2 = new Registers(8, 16);

    public Registers {
        if (lanes < 1 || count < 1) throw new IllegalArgumentException("registers need lanes and a count, got " + lanes + " x " + count);
    }

    /** The file kernels for {@code target} tile: AVX-512's 32 registers of 16 floats where it has them, else {@link #AVX2}'s. */
    public static Registers of(Target target) {
        return target.vectorBits() >= 512 ? new Registers(16, 32) : AVX2;
    }

    /** Registers one tile row of {@code channels} float32 channels takes (at least one). */
    public int vectors(int channels) {
        return Math.max(1, (channels + lanes - 1) / lanes);
    }
}
