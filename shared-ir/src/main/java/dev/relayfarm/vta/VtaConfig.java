package dev.relayfarm.vta;

/**
 * The simulated accelerator's shape. Element widths are fixed (int8 inputs and weights, int32 accumulators, int8
 * stores) because they are what the GEMM and store semantics are written for; the GEMM core and buffer sizes vary.
 *
 * @param batch                 rows of an input entry (VTA's BATCH)
 * @param blockIn               the reduction width of one GEMM (BLOCK_IN)
 * @param blockOut              the output width of one GEMM (BLOCK_OUT)
 * @param uopBufferBytes        micro-op buffer size in bytes; a micro-op is 32 bits
 * @param inputBufferBytes      input buffer size in bytes; an entry is batch × blockIn int8
 * @param weightBufferBytes     weight buffer size in bytes; an entry is blockOut × blockIn int8
 * @param accBufferBytes        accumulator buffer size in bytes; an entry is batch × blockOut int32
 * @param dmaBytesPerCycle      DRAM bandwidth of every DMA transfer
 * @param dmaLatencyCycles      fixed cycles every LOAD or STORE pays on top of its bytes / bandwidth
 * @param aluInitiationInterval cycles between two ALU operations: VTA's ALU reads two accumulator entries from a
 *                              single-ported buffer, so it cannot issue every cycle
 */
public record VtaConfig(int batch, int blockIn, int blockOut, int uopBufferBytes, int inputBufferBytes, int weightBufferBytes,
        int accBufferBytes, int dmaBytesPerCycle, int dmaLatencyCycles, int aluInitiationInterval) {

    /** Input and weight element width; the simulator only implements int8 operands. */
    public static final int INPUT_BITS = 8;
    public static final int WEIGHT_BITS = 8;
    /** Accumulator width; arithmetic on accumulators wraps at 32 bits like the hardware's adders. */
    public static final int ACC_BITS = 32;
    /** Stored outputs are int8: the low 8 bits of each accumulator. */
    public static final int OUTPUT_BITS = 8;
    public static final int UOP_BYTES = 4;

    public VtaConfig {
        positive("batch", batch);
        positive("blockIn", blockIn);
        positive("blockOut", blockOut);
        positive("dmaBytesPerCycle", dmaBytesPerCycle);
        positive("aluInitiationInterval", aluInitiationInterval);
        if (dmaLatencyCycles < 0) {
            throw new IllegalArgumentException("dmaLatencyCycles must be >= 0, got " + dmaLatencyCycles);
        }
        wholeEntries("uopBufferBytes", uopBufferBytes, UOP_BYTES);
        wholeEntries("inputBufferBytes", inputBufferBytes, batch * blockIn);
        wholeEntries("weightBufferBytes", weightBufferBytes, blockOut * blockIn);
        wholeEntries("accBufferBytes", accBufferBytes, batch * blockOut * 4);
    }

    /**
     * VTA's default configuration: 1×16×16 GEMM, 32 KiB micro-ops, 32 KiB inputs, 256 KiB weights, 128 KiB
     * accumulators. The DMA numbers are this simulator's own choice (a 64-bit bus, no latency), not a measurement.
     */
    public static VtaConfig defaults() {
        return new VtaConfig(1, 16, 16, 32 * 1024, 32 * 1024, 256 * 1024, 128 * 1024, 8, 0, 2);
    }

    public VtaConfig withDma(int bytesPerCycle, int latencyCycles) {
        return new VtaConfig(batch, blockIn, blockOut, uopBufferBytes, inputBufferBytes, weightBufferBytes, accBufferBytes,
                bytesPerCycle, latencyCycles, aluInitiationInterval);
    }

    public VtaConfig withAluInitiationInterval(int cycles) {
        return new VtaConfig(batch, blockIn, blockOut, uopBufferBytes, inputBufferBytes, weightBufferBytes, accBufferBytes,
                dmaBytesPerCycle, dmaLatencyCycles, cycles);
    }

    /** Bytes one entry of the buffer occupies, on chip and in DRAM. */
    public int entryBytes(BufferKind buffer) {
        return switch (buffer) {
            case UOP -> UOP_BYTES;
            case INP -> batch * blockIn;
            case WGT -> blockOut * blockIn;
            case ACC -> batch * blockOut * 4;
        };
    }

    public int entries(BufferKind buffer) {
        return bufferBytes(buffer) / entryBytes(buffer);
    }

    public int bufferBytes(BufferKind buffer) {
        return switch (buffer) {
            case UOP -> uopBufferBytes;
            case INP -> inputBufferBytes;
            case WGT -> weightBufferBytes;
            case ACC -> accBufferBytes;
        };
    }

    /** Bytes one stored output entry occupies in DRAM: batch × blockOut int8. */
    public int outputEntryBytes() {
        return batch * blockOut;
    }

    private static void positive(String field, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(field + " must be > 0, got " + value);
        }
    }

    private static void wholeEntries(String field, int bytes, int entryBytes) {
        if (bytes <= 0 || bytes % entryBytes != 0) {
            throw new IllegalArgumentException(field + " must be a positive multiple of its entry size " + entryBytes + " bytes, got " + bytes);
        }
    }
}
