package dev.relayfarm.vta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class StoreTest {
    private static final DependencyFlags NONE = DependencyFlags.NONE;
    private static final byte SENTINEL = 0x55;
    private final VtaSimulator simulator = new VtaSimulator(VtaConfig.defaults());

    @Test
    void storesTheLowEightBitsOfEachAccumulator() {
        int[] acc = {300, -129, -1, 127, 128, 255, 256, -128, 0, 1 << 20, -(1 << 20) + 3, Integer.MAX_VALUE, Integer.MIN_VALUE, 511, -256, 42};
        DramImage dram = new DramImage(64 + 16).putInts(0, acc);
        Arrays.fill(dram.bytes, 64, 80, SENTINEL);
        simulator.run(List.of(Load.contiguous(NONE, BufferKind.ACC, 0, 0, 1), Store.contiguous(NONE, 0, 4, 1)), dram.bytes);
        byte[] expected = {44, 127, -1, 127, -128, -1, 0, -128, 0, 0, 3, -1, 0, -1, 0, 42};
        assertArrayEquals(expected, Arrays.copyOfRange(dram.bytes, 64, 80));
    }

    @Test
    void stridedStoreLeavesTheGapsAlone() {
        // four accumulator entries, entry e all lanes = e + 1, stored as 2 rows × 2 entries with a DRAM row stride of 3
        int[] acc = new int[64];
        for (int i = 0; i < 64; i++) {
            acc[i] = i / 16 + 1;
        }
        DramImage dram = new DramImage(256 + 6 * 16).putInts(0, acc);
        Arrays.fill(dram.bytes, 256, dram.bytes.length, SENTINEL);
        SimulationResult result = simulator.run(List.of(Load.contiguous(NONE, BufferKind.ACC, 0, 0, 4), new Store(NONE, 0, 16, 2, 2, 3)), dram.bytes);
        int[] expectedEntry = {1, 2, SENTINEL, 3, 4, SENTINEL};
        for (int e = 0; e < 6; e++) {
            byte[] entry = Arrays.copyOfRange(dram.bytes, 256 + e * 16, 256 + e * 16 + 16);
            byte[] expected = new byte[16];
            Arrays.fill(expected, (byte) expectedEntry[e]);
            assertArrayEquals(expected, entry, "DRAM output entry " + e);
        }
        assertEquals(64, result.stats().storedBytes());
    }

    @Test
    void outOfRangeStoresNameTheirFields() {
        VtaProgramException sram = assertThrows(VtaProgramException.class,
                () -> simulator.run(List.of(Store.contiguous(NONE, 2047, 0, 2)), new byte[1024]));
        assertTrue(sram.getMessage().contains("instruction #0 (STORE): sram_base 2047"), sram.getMessage());
        VtaProgramException dram = assertThrows(VtaProgramException.class,
                () -> simulator.run(List.of(Store.contiguous(NONE, 0, 60, 5)), new byte[1024]));
        assertTrue(dram.getMessage().contains("dram_base 60"), dram.getMessage());
    }
}
