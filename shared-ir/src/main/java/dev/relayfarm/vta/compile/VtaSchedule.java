package dev.relayfarm.vta.compile;

/**
 * The knobs of one layer's accelerator schedule (the tuner's config space for this target).
 *
 * @param tileRows       output rows per tile; the last tile of a layer may be shorter
 * @param tileCoBlocks   output-channel blocks (of BLOCK_OUT channels) per tile; the last may be narrower
 * @param tileCiBlocks   input-channel blocks (of BLOCK_IN channels) per reduction step: a tile accumulates over
 *                       ceil(blocks / tileCiBlocks) steps, each with its own input and weight loads; at least the
 *                       layer's blocks ({@link #ALL}) means one step
 * @param virtualThreads 1, or 2 for double buffering: the input, weight and accumulator buffers are split in halves
 *                       so the load module fetches tile t+1 while compute works on t and store drains t-1
 */
public record VtaSchedule(int tileRows, int tileCoBlocks, int tileCiBlocks, int virtualThreads) {
    /** {@code tileCiBlocks} for "the whole reduction in one step". */
    public static final int ALL = Integer.MAX_VALUE;

    public VtaSchedule {
        if (tileRows < 1 || tileCoBlocks < 1 || tileCiBlocks < 1) {
            throw new IllegalArgumentException("tile sizes must be >= 1, got tileRows=" + tileRows + ", tileCoBlocks=" + tileCoBlocks + ", tileCiBlocks=" + tileCiBlocks);
        }
        if (virtualThreads != 1 && virtualThreads != 2) {
            throw new IllegalArgumentException("virtual threads must be 1 or 2, got " + virtualThreads);
        }
    }

    /** The whole reduction in one step. */
    public VtaSchedule(int tileRows, int tileCoBlocks, int virtualThreads) {
        this(tileRows, tileCoBlocks, ALL, virtualThreads);
    }

    @Override
    public String toString() {
        return "rows=" + tileRows + " co=" + tileCoBlocks + (tileCiBlocks == ALL ? "" : " ci=" + tileCiBlocks) + " vt=" + virtualThreads;
    }
}
