package dev.relayfarm.kernel.template;

import dev.relayfarm.kernel.target.Target;

/**
 * The vector registers a register tile is counted in: float32 {@code lanes} per register. The depthwise template counts
 * a tile's accumulators in these: a 16-channel block is two registers on AVX2 and one on AVX-512, so a tile that fills
 * AVX2's registers leaves an AVX-512 core waiting on its FMA latency (4 or 5 accumulators of 4-cycle FMAs, one issued
 * per cycle). AVX-512 also has twice the registers (32), room the templates' accumulator limits leave unused. The other
 * templates count in AVX2's registers whatever the target (for the NCHWc convolution, wider tiles did not pay: README).
 *
 * <p>Templates made without a target count in {@link #AVX2}'s, what the schedules and tests before this had.
 */
public record Registers(int lanes) {
    /** Eight floats a register (AVX2; also what SSE2 and NEON tiles are counted in, half-filled). */
    public static final Registers AVX2 = new Registers(8);

    public Registers {
        if (lanes < 1) throw new IllegalArgumentException("registers need at least one lane, got " + lanes);
    }

    /** The registers kernels for {@code target} hold their tiles in: AVX-512's 16 floats where it has them, else {@link #AVX2}'s. */
    public static Registers of(Target target) {
        return target.vectorBits() >= 512 ? new Registers(16) : AVX2;
    }

    /** Registers one tile row of {@code channels} float32 channels takes (at least one). */
    public int vectors(int channels) {
        return Math.max(1, (channels + lanes - 1) / lanes);
    }
}
