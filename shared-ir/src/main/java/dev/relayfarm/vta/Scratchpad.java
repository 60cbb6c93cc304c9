package dev.relayfarm.vta;

import java.util.Arrays;

/**
 * The four on-chip buffers. Only the simulator writes them; readers get copies, so a result cannot be altered after
 * the run it describes.
 */
public final class Scratchpad {
    private final VtaConfig config;
    final int[] uops;
    final byte[] inputs;
    final byte[] weights;
    final int[] accumulators;

    Scratchpad(VtaConfig config) {
        this.config = config;
        this.uops = new int[config.entries(BufferKind.UOP)];
        this.inputs = new byte[config.inputBufferBytes()];
        this.weights = new byte[config.weightBufferBytes()];
        this.accumulators = new int[config.entries(BufferKind.ACC) * config.batch() * config.blockOut()];
    }

    public VtaConfig config() {
        return config;
    }

    public Uop uop(int entry) {
        return Uop.decode(uops[check(BufferKind.UOP, entry)]);
    }

    /** batch × blockIn int8, row-major by batch. */
    public byte[] inputEntry(int entry) {
        int size = config.entryBytes(BufferKind.INP);
        int from = check(BufferKind.INP, entry) * size;
        return Arrays.copyOfRange(inputs, from, from + size);
    }

    /** blockOut × blockIn int8, row-major by output channel. */
    public byte[] weightEntry(int entry) {
        int size = config.entryBytes(BufferKind.WGT);
        int from = check(BufferKind.WGT, entry) * size;
        return Arrays.copyOfRange(weights, from, from + size);
    }

    /** batch × blockOut int32, row-major by batch. */
    public int[] accEntry(int entry) {
        int lanes = config.batch() * config.blockOut();
        int from = check(BufferKind.ACC, entry) * lanes;
        return Arrays.copyOfRange(accumulators, from, from + lanes);
    }

    private int check(BufferKind buffer, int entry) {
        if (entry < 0 || entry >= config.entries(buffer)) {
            throw new IndexOutOfBoundsException(buffer + " entry " + entry + " outside 0.." + (config.entries(buffer) - 1));
        }
        return entry;
    }
}
