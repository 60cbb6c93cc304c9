package dev.relayfarm.vta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Cycle counts worked out by hand from the model's rules, with an 8 bytes/cycle DMA and no latency unless stated. */
class CycleModelTest {
    private static final DependencyFlags NONE = DependencyFlags.NONE;
    private static final VtaConfig CONFIG = VtaConfig.defaults().withDma(8, 0);

    private static Gemm gemm(DependencyFlags deps, UopLoop loop) {
        return new Gemm(deps, false, loop, IndexFactors.ZERO, IndexFactors.ZERO, IndexFactors.ZERO);
    }

    @Test
    void gemmTakesOneCyclePerIteration() {
        List<Instruction> program = List.of(Load.contiguous(NONE, BufferKind.UOP, 0, 0, 5), gemm(NONE, new UopLoop(0, 5, 3, 4)),
                new Gemm(NONE, true, new UopLoop(0, 5, 3, 4), IndexFactors.ZERO, IndexFactors.ZERO, IndexFactors.ZERO));
        ExecutionStats stats = new VtaSimulator(CONFIG).run(program, new byte[1024]).stats();
        assertEquals(120, stats.gemmOps());
        assertEquals(3 + 120, stats.busy(Module.COMPUTE), "20 bytes of micro-ops take ceil(20 / 8) = 3 cycles");
        assertEquals(123, stats.totalCycles());
    }

    private static long loadCycles(VtaConfig config, Load load) {
        ExecutionStats stats = new VtaSimulator(config).run(List.of(load), new byte[4096]).stats();
        assertEquals(stats.busy(Module.LOAD), stats.totalCycles());
        return stats.totalCycles();
    }

    @Test
    void dmaTimeScalesWithBytesMovedPlusLatency() {
        assertEquals(20, loadCycles(CONFIG, Load.contiguous(NONE, BufferKind.INP, 0, 0, 10)));
        assertEquals(40, loadCycles(CONFIG, Load.contiguous(NONE, BufferKind.INP, 0, 0, 20)));
        assertEquals(10, loadCycles(CONFIG.withDma(16, 0), Load.contiguous(NONE, BufferKind.INP, 0, 0, 10)));
        assertEquals(27, loadCycles(CONFIG.withDma(8, 7), Load.contiguous(NONE, BufferKind.INP, 0, 0, 10)));
        assertEquals(64, loadCycles(CONFIG, Load.contiguous(NONE, BufferKind.WGT, 0, 0, 2)));
        // padding is written on chip but never read from DRAM
        assertEquals(20, loadCycles(CONFIG, new Load(NONE, BufferKind.INP, 0, 0, 2, 5, 5, 3, 3, 3, 3)));
    }

    @Test
    void aluIssuesOnceEveryInitiationInterval() {
        Alu alu = Alu.withImmediate(NONE, AluOp.ADD, new UopLoop(0, 1, 2, 3), IndexFactors.ZERO, 1);
        List<Instruction> program = List.of(Load.contiguous(NONE, BufferKind.UOP, 0, 0, 2), alu);
        assertEquals(1 + 12, new VtaSimulator(CONFIG).run(program, new byte[64]).stats().busy(Module.COMPUTE));
        assertEquals(1 + 18, new VtaSimulator(CONFIG.withAluInitiationInterval(3)).run(program, new byte[64]).stats().busy(Module.COMPUTE));
    }

    @Test
    void aPopWaitsUntilTheTokensPushTimeAndTokensAreFifo() {
        // two 512-byte input loads, 64 cycles each; each GEMM pops one token and so starts when its own load ended
        List<Instruction> program = List.of(Load.contiguous(NONE, BufferKind.UOP, 0, 0, 1),
                Load.contiguous(NONE.withPushNext(), BufferKind.INP, 0, 0, 32), gemm(NONE.withPopPrev(), UopLoop.single(0)),
                Load.contiguous(NONE.withPushNext(), BufferKind.INP, 32, 0, 32), gemm(NONE.withPopPrev(), UopLoop.single(0)),
                new Finish(NONE));
        ExecutionStats stats = new VtaSimulator(CONFIG).run(program, new byte[1024]).stats();
        assertEquals(129, stats.totalCycles());
        assertEquals(129, stats.finishCycle().orElseThrow());
        assertEquals(128, stats.busy(Module.LOAD));
        assertEquals(1 + 2, stats.busy(Module.COMPUTE));
    }

    private static final int TILES = 4;
    private final Random random = new Random(99);
    private final byte[] tiles = DramImage.randomInt8(random, TILES * 16 * 16);
    private final byte[] weights = DramImage.randomInt8(random, 2 * 256);

    /**
     * Four input tiles of 16 entries (32 cycles to load), each multiplied by two weight blocks (32 GEMM cycles). With
     * two input slots, loading tile t+2 waits only for the GEMM of tile t; with one slot every load waits for the
     * GEMM before it.
     */
    private SimulationResult pipeline(int slots) {
        DramImage dram = new DramImage(8192).putBytes(0, tiles).putBytes(4096, weights);
        Uop[] uops = new Uop[TILES];
        for (int t = 0; t < TILES; t++) {
            uops[t] = new Uop(t * 32, (t % slots) * 16, 0);
        }
        dram.putUops(6144, uops);
        List<Instruction> program = new ArrayList<>(List.of(Load.contiguous(NONE, BufferKind.UOP, 0, 6144 / 4, TILES),
                Load.contiguous(NONE, BufferKind.WGT, 0, 4096 / 256, 2)));
        for (int t = 0; t < TILES; t++) {
            DependencyFlags loadDeps = t >= slots ? NONE.withPopNext().withPushNext() : NONE.withPushNext();
            program.add(Load.contiguous(loadDeps, BufferKind.INP, (t % slots) * 16, t * 16, 16));
            DependencyFlags gemmDeps = t < TILES - slots ? NONE.withPopPrev().withPushPrev() : NONE.withPopPrev();
            program.add(new Gemm(gemmDeps, false, new UopLoop(t, t + 1, 16, 2), new IndexFactors(2, 1), new IndexFactors(1, 0), new IndexFactors(0, 1)));
        }
        SimulationResult result = new VtaSimulator(CONFIG).run(program, dram.bytes);
        for (int t = 0; t < TILES; t++) {
            for (int i = 0; i < 16; i++) {
                for (int j = 0; j < 2; j++) {
                    int[] expected = new int[16];
                    for (int o = 0; o < 16; o++) {
                        for (int k = 0; k < 16; k++) {
                            expected[o] += tiles[(t * 16 + i) * 16 + k] * weights[j * 256 + o * 16 + k];
                        }
                    }
                    assertArrayEquals(expected, result.sram().accEntry(t * 32 + i * 2 + j), "tile " + t + " row " + i + " block " + j);
                }
            }
        }
        return result;
    }

    @Test
    void doubleBufferingOverlapsLoadAndCompute() {
        ExecutionStats stats = pipeline(2).stats();
        assertEquals(64 + TILES * 32, stats.busy(Module.LOAD));
        assertEquals(2 + TILES * 32, stats.busy(Module.COMPUTE));
        // weights 0..64, tiles load 64..96, 96..128, 128..160, 160..192; GEMMs 96..128, 128..160, 160..192, 192..224
        assertEquals(224, stats.totalCycles());
        assertTrue(stats.totalCycles() < stats.busySum(), stats.totalCycles() + " cycles vs " + stats.busySum() + " busy");

        ExecutionStats serial = pipeline(1).stats();
        // every load now waits for the previous GEMM: 64 + 4 × (32 + 32)
        assertEquals(320, serial.totalCycles());
        assertTrue(stats.totalCycles() < serial.totalCycles());
    }
}
