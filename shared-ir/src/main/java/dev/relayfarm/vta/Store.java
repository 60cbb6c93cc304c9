package dev.relayfarm.vta;

/**
 * A 2-D strided DMA from the accumulator buffer to DRAM. Each accumulator becomes one int8 output byte holding its
 * <em>low 8 bits</em> (truncation, not saturation: 300 stores as 44, -129 as 127), because VTA's store path narrows
 * accumulators by a plain cast; programs clip with ALU MIN/MAX first when they want saturation. Addresses count
 * entries: on chip accumulator entries, in DRAM output entries of batch × blockOut bytes.
 */
public record Store(DependencyFlags deps, int sramBase, long dramBase, int ySize, int xSize, int xStride) implements Instruction {
    public Store {
        if (sramBase < 0 || dramBase < 0 || ySize < 0 || xSize < 0 || xStride < 0) {
            throw new IllegalArgumentException("STORE fields must be >= 0: sram_base=" + sramBase + " dram_base=" + dramBase + " y_size=" + ySize
                    + " x_size=" + xSize + " x_stride=" + xStride);
        }
    }

    public static Store contiguous(DependencyFlags deps, int sramBase, long dramBase, int entries) {
        return new Store(deps, sramBase, dramBase, 1, entries, entries);
    }

    public long entries() {
        return (long) ySize * xSize;
    }
}
