package dev.relayfarm.vta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class LoadTest {
    private final VtaSimulator simulator = new VtaSimulator(VtaConfig.defaults());
    private static final DependencyFlags NONE = DependencyFlags.NONE;

    /** DRAM input entry e holds bytes e+1, e+2, ... so every entry is distinguishable and none is all zeros. */
    private static DramImage numberedInputs(int entries) {
        DramImage dram = new DramImage(entries * 16);
        for (int e = 0; e < entries; e++) {
            for (int k = 0; k < 16; k++) {
                dram.bytes[e * 16 + k] = (byte) (e + 1 + k);
            }
        }
        return dram;
    }

    private static byte[] dramEntry(DramImage dram, int entry) {
        return java.util.Arrays.copyOfRange(dram.bytes, entry * 16, entry * 16 + 16);
    }

    @Test
    void stridedInputLoadWithPaddingOnAllSides() {
        // a 4×5 grid of input entries in DRAM; copy the 2×3 block at row 1, column 1, padded 1 row above and below,
        // 2 columns left and 1 right, into SRAM from entry 10 as a dense 4×6 block
        DramImage dram = numberedInputs(20);
        Load load = new Load(NONE, BufferKind.INP, 10, 6, 2, 3, 5, 1, 1, 2, 1);
        Scratchpad sram = simulator.run(List.of(load), dram.bytes).sram();
        byte[] zeros = new byte[16];
        for (int r = 0; r < 4; r++) {
            for (int c = 0; c < 6; c++) {
                boolean inside = r >= 1 && r <= 2 && c >= 2 && c <= 4;
                byte[] expected = inside ? dramEntry(dram, 6 + (r - 1) * 5 + (c - 2)) : zeros;
                assertArrayEquals(expected, sram.inputEntry(10 + r * 6 + c), "row " + r + " column " + c);
            }
        }
        // spot checks written out by hand: SRAM 10 + 1·6 + 2 = 18 is the first copied entry, DRAM entry 6; SRAM
        // 10 + 2·6 + 4 = 26 the last, DRAM entry 6 + 5 + 2 = 13; 27 is right padding
        assertArrayEquals(dramEntry(dram, 6), sram.inputEntry(18));
        assertArrayEquals(dramEntry(dram, 13), sram.inputEntry(26));
        assertArrayEquals(zeros, sram.inputEntry(27));
        assertArrayEquals(zeros, sram.inputEntry(9), "nothing before sram_base is written");
        assertArrayEquals(zeros, sram.inputEntry(34), "nothing after the padded block is written");
    }

    @Test
    void weightLoadCopiesWholeEntries() {
        DramImage dram = new DramImage(3 * 256);
        byte[] data = DramImage.randomInt8(new java.util.Random(1), 3 * 256);
        dram.putBytes(0, data);
        Scratchpad sram = simulator.run(List.of(Load.contiguous(NONE, BufferKind.WGT, 1000, 1, 2)), dram.bytes).sram();
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 256, 512), sram.weightEntry(1000));
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 512, 768), sram.weightEntry(1001));
    }

    @Test
    void accumulatorLoadReadsLittleEndianInt32AndPadsWithZero() {
        int[] values = new int[32];
        for (int i = 0; i < 32; i++) {
            values[i] = (i % 2 == 0 ? -1 : 1) * (i * 100_003);
        }
        values[0] = Integer.MIN_VALUE;
        DramImage dram = new DramImage(128).putInts(0, values);
        Load load = new Load(NONE, BufferKind.ACC, 4, 0, 1, 2, 2, 0, 0, 1, 0);
        Scratchpad sram = simulator.run(List.of(load), dram.bytes).sram();
        assertArrayEquals(new int[16], sram.accEntry(4));
        assertArrayEquals(java.util.Arrays.copyOfRange(values, 0, 16), sram.accEntry(5));
        assertArrayEquals(java.util.Arrays.copyOfRange(values, 16, 32), sram.accEntry(6));
    }

    @Test
    void microOpLoadRunsOnComputeAndCannotBePadded() {
        DramImage dram = new DramImage(64).putUops(8, new Uop(1, 2, 3), new Uop(2047, 0, 1023));
        Load load = Load.contiguous(NONE, BufferKind.UOP, 100, 2, 2);
        assertEquals(Module.COMPUTE, Module.executing(load));
        SimulationResult result = simulator.run(List.of(load), dram.bytes);
        assertEquals(new Uop(1, 2, 3), result.sram().uop(100));
        assertEquals(new Uop(2047, 0, 1023), result.sram().uop(101));
        assertEquals(8, result.stats().loaded(BufferKind.UOP));

        Load padded = new Load(NONE, BufferKind.UOP, 0, 0, 1, 1, 1, 0, 0, 1, 0);
        VtaProgramException e = assertThrows(VtaProgramException.class, () -> simulator.run(List.of(padded), dram.bytes));
        assertTrue(e.getMessage().contains("instruction #0 (LOAD UOP)"), e.getMessage());
    }

    @Test
    void sramOverflowNamesTheInstructionAndField() {
        DramImage dram = numberedInputs(4);
        List<Instruction> program = List.of(Load.contiguous(NONE, BufferKind.INP, 0, 0, 1), new Finish(NONE),
                new Load(NONE, BufferKind.INP, 2046, 0, 1, 2, 2, 0, 0, 0, 1));
        VtaProgramException e = assertThrows(VtaProgramException.class, () -> simulator.run(program, dram.bytes));
        assertEquals(2, e.instructionIndex());
        assertTrue(e.getMessage().contains("instruction #2 (LOAD INP): sram_base 2046"), e.getMessage());
        assertTrue(e.getMessage().contains("2049 exceeds the INP buffer's 2048 entries"), e.getMessage());
    }

    @Test
    void readingPastDramNamesDramBase() {
        DramImage dram = numberedInputs(4);
        Load load = new Load(NONE, BufferKind.INP, 0, 1, 2, 1, 3, 0, 0, 0, 0);
        VtaProgramException e = assertThrows(VtaProgramException.class, () -> simulator.run(List.of(load), dram.bytes));
        assertTrue(e.getMessage().contains("dram_base 1"), e.getMessage());
        assertTrue(e.getMessage().contains("reaches DRAM byte 80 but DRAM has 64 bytes"), e.getMessage());
    }
}
