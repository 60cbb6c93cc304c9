package dev.relayfarm.vta.compile;

/**
 * The knobs of one layer's accelerator schedule (the tuner's config space for this target).
 *
 * @param tileRows       output rows per tile; the last tile of a layer may be shorter
 * @param tileCoBlocks   output-channel blocks (of BLOCK_OUT channels) per tile; the last may be narrower
 * @param virtualThreads 1, or 2 for double buffering: the input, weight and accumulator buffers are split in halves
 *                       so the load module fetches tile t+1 while compute works on t and store drains t-1
 */
public record VtaSchedule(int tileRows, int tileCoBlocks, int virtualThreads) {
    public VtaSchedule {
        if (tileRows < 1 || tileCoBlocks < 1) {
            throw new IllegalArgumentException("tile sizes must be >= 1, got tileRows=" + tileRows + ", tileCoBlocks=" + tileCoBlocks);
        }
        if (virtualThreads != 1 && virtualThreads != 2) {
            throw new IllegalArgumentException("virtual threads must be 1 or 2, got " + virtualThreads);
        }
    }

    @Override
    public String toString() {
        return "rows=" + tileRows + " coBlocks=" + tileCoBlocks + " vt=" + virtualThreads;
    }
}
