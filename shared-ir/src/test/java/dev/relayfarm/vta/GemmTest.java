package dev.relayfarm.vta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A 4×(3·16) by (3·16)×(2·16) matrix product tiled the way VTA tiles it: iter_out walks input rows i, iter_in output
 * blocks j, and the micro-ops walk the reduction blocks k. acc(i, j) = i·2 + j, inp(i, k) = i·3 + k, wgt(j, k) = j·3 + k.
 */
class GemmTest {
    private static final DependencyFlags NONE = DependencyFlags.NONE;
    private static final int ROWS = 4, K_BLOCKS = 3, J_BLOCKS = 2;
    private static final int INP_AT = 0, WGT_AT = 4096, ACC_AT = 8192, UOP_AT = 16384;

    private final VtaSimulator simulator = new VtaSimulator(VtaConfig.defaults());
    private final Random random = new Random(2024);
    private final byte[] inputs = DramImage.randomInt8(random, ROWS * K_BLOCKS * 16);
    private final byte[] weights = DramImage.randomInt8(random, J_BLOCKS * K_BLOCKS * 256);
    private final int[] initialAcc = random.ints(ROWS * J_BLOCKS * 16, -1_000_000, 1_000_000).toArray();

    private DramImage dram() {
        DramImage dram = new DramImage(20000).putBytes(INP_AT, inputs).putBytes(WGT_AT, weights).putInts(ACC_AT, initialAcc);
        List<Uop> uops = new ArrayList<>();
        for (int k = 0; k < K_BLOCKS; k++) {
            uops.add(new Uop(0, k, k));
        }
        return dram.putUops(UOP_AT, uops.toArray(Uop[]::new));
    }

    private static List<Instruction> setup() {
        return List.of(Load.contiguous(NONE, BufferKind.INP, 0, INP_AT / 16, ROWS * K_BLOCKS),
                Load.contiguous(NONE, BufferKind.WGT, 0, WGT_AT / 256, J_BLOCKS * K_BLOCKS),
                Load.contiguous(NONE, BufferKind.ACC, 0, ACC_AT / 64, ROWS * J_BLOCKS),
                Load.contiguous(NONE, BufferKind.UOP, 0, UOP_AT / 4, K_BLOCKS));
    }

    private static Gemm product(boolean reset) {
        return new Gemm(NONE, reset, new UopLoop(0, reset ? 1 : K_BLOCKS, ROWS, J_BLOCKS), new IndexFactors(J_BLOCKS, 1),
                new IndexFactors(K_BLOCKS, 0), new IndexFactors(0, K_BLOCKS));
    }

    /** The product computed on plain matrices, with no knowledge of entries or micro-ops. */
    private long[][] reference() {
        long[][] out = new long[ROWS][J_BLOCKS * 16];
        for (int i = 0; i < ROWS; i++) {
            for (int n = 0; n < J_BLOCKS * 16; n++) {
                for (int c = 0; c < K_BLOCKS * 16; c++) {
                    int a = inputs[i * K_BLOCKS * 16 + c];
                    // weight block (j, k) holds rows o, columns kk: W[n = j·16 + o][c = k·16 + kk]
                    int j = n / 16, o = n % 16, k = c / 16, kk = c % 16;
                    int w = weights[(j * K_BLOCKS + k) * 256 + o * 16 + kk];
                    out[i][n] += (long) a * w;
                }
            }
        }
        return out;
    }

    private int[] accRow(Scratchpad sram, int i) {
        int[] row = new int[J_BLOCKS * 16];
        for (int j = 0; j < J_BLOCKS; j++) {
            System.arraycopy(sram.accEntry(i * J_BLOCKS + j), 0, row, j * 16, 16);
        }
        return row;
    }

    @Test
    void resetThenMultiplyMatchesPlainMatrixProduct() {
        List<Instruction> program = new ArrayList<>(setup());
        program.add(product(true));
        program.add(product(false));
        SimulationResult result = simulator.run(program, dram().bytes);
        long[][] expected = reference();
        for (int i = 0; i < ROWS; i++) {
            int[] row = accRow(result.sram(), i);
            for (int n = 0; n < row.length; n++) {
                assertEquals(expected[i][n], row[n], "row " + i + " column " + n);
            }
        }
        assertEquals(ROWS * J_BLOCKS + ROWS * J_BLOCKS * K_BLOCKS, result.stats().gemmOps());
        assertEquals((long) ROWS * J_BLOCKS * K_BLOCKS * 16 * 16, result.stats().macs());
    }

    @Test
    void withoutResetTheProductAddsToTheLoadedAccumulators() {
        List<Instruction> program = new ArrayList<>(setup());
        program.add(product(false));
        Scratchpad sram = simulator.run(program, dram().bytes).sram();
        long[][] expected = reference();
        for (int i = 0; i < ROWS; i++) {
            int[] row = accRow(sram, i);
            for (int n = 0; n < row.length; n++) {
                assertEquals(initialAcc[i * J_BLOCKS * 16 + n] + expected[i][n], row[n], "row " + i + " column " + n);
            }
        }
    }

    @Test
    void resetClearsOnlyTheEntriesItsLoopVisits() {
        List<Instruction> program = new ArrayList<>(setup());
        // reset entries 0, 2, 4, 6 (column block 0 of every row)
        program.add(new Gemm(NONE, true, new UopLoop(0, 1, ROWS, 1), new IndexFactors(J_BLOCKS, 0), IndexFactors.ZERO, IndexFactors.ZERO));
        Scratchpad sram = simulator.run(program, dram().bytes).sram();
        for (int entry = 0; entry < ROWS * J_BLOCKS; entry++) {
            int[] expected = entry % 2 == 0 ? new int[16] : java.util.Arrays.copyOfRange(initialAcc, entry * 16, entry * 16 + 16);
            assertArrayEquals(expected, sram.accEntry(entry), "entry " + entry);
        }
    }

    @Test
    void indexOutsideABufferNamesTheFieldAndIteration() {
        List<Instruction> program = new ArrayList<>(setup());
        program.add(new Gemm(NONE, false, new UopLoop(0, 1, 3, 1), IndexFactors.ZERO, IndexFactors.ZERO, new IndexFactors(1000, 0)));
        VtaProgramException e = assertThrows(VtaProgramException.class, () -> simulator.run(program, dram().bytes));
        assertTrue(e.getMessage().contains("instruction #4 (GEMM): wgt index 2000"), e.getMessage());
        assertTrue(e.getMessage().contains("i0=2"), e.getMessage());

        List<Instruction> tooManyUops = new ArrayList<>(setup());
        tooManyUops.add(new Gemm(NONE, false, new UopLoop(0, 8193, 1, 1), IndexFactors.ZERO, IndexFactors.ZERO, IndexFactors.ZERO));
        VtaProgramException uop = assertThrows(VtaProgramException.class, () -> simulator.run(tooManyUops, dram().bytes));
        assertTrue(uop.getMessage().contains("uop_end 8193"), uop.getMessage());
    }
}
