package dev.relayfarm.vta;

/**
 * A 2-D strided DMA from DRAM into an on-chip buffer, with zero padding around the copied block. Addresses count
 * entries of the target buffer, not bytes: row r of the block starts at DRAM entry {@code dramBase + r × xStride}.
 * On chip the padded block ({@code yPad0 + ySize + yPad1} rows of {@code xPad0 + xSize + xPad1} entries) is written
 * densely from {@code sramBase}; padding entries are zeros and never touch DRAM.
 */
public record Load(DependencyFlags deps, BufferKind buffer, int sramBase, long dramBase, int ySize, int xSize, int xStride,
        int yPad0, int yPad1, int xPad0, int xPad1) implements Instruction {
    public Load {
        if (sramBase < 0 || dramBase < 0 || ySize < 0 || xSize < 0 || xStride < 0 || yPad0 < 0 || yPad1 < 0 || xPad0 < 0 || xPad1 < 0) {
            throw new IllegalArgumentException("LOAD fields must be >= 0: " + fields(sramBase, dramBase, ySize, xSize, xStride, yPad0, yPad1, xPad0, xPad1));
        }
    }

    /** A contiguous, unpadded load of {@code entries} entries. */
    public static Load contiguous(DependencyFlags deps, BufferKind buffer, int sramBase, long dramBase, int entries) {
        return new Load(deps, buffer, sramBase, dramBase, 1, entries, entries, 0, 0, 0, 0);
    }

    public int rows() {
        return yPad0 + ySize + yPad1;
    }

    public int columns() {
        return xPad0 + xSize + xPad1;
    }

    public long sramEntries() {
        return (long) rows() * columns();
    }

    public long dramEntries() {
        return (long) ySize * xSize;
    }

    static String fields(int sramBase, long dramBase, int ySize, int xSize, int xStride, int yPad0, int yPad1, int xPad0, int xPad1) {
        return "sram_base=" + sramBase + " dram_base=" + dramBase + " y_size=" + ySize + " x_size=" + xSize + " x_stride=" + xStride
                + " y_pad_0=" + yPad0 + " y_pad_1=" + yPad1 + " x_pad_0=" + xPad0 + " x_pad_1=" + xPad1;
    }
}
