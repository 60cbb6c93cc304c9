package dev.relayfarm.vta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DependencyQueueTest {
    private static final DependencyFlags NONE = DependencyFlags.NONE;
    private final VtaSimulator simulator = new VtaSimulator(VtaConfig.defaults().withDma(8, 0));

    /** inputs X at entry 0, Y at entry 1, weights at byte 256, micro-ops (acc 0, inp 0, wgt 0) and (acc 1, inp 0, wgt 0) at 1024. */
    private final Random random = new Random(7);
    private final byte[] x = DramImage.randomInt8(random, 16);
    private final byte[] y = DramImage.randomInt8(random, 16);
    private final byte[] w = DramImage.randomInt8(random, 256);

    private DramImage dram() {
        return new DramImage(2048).putBytes(0, x).putBytes(16, y).putBytes(256, w).putUops(1024, new Uop(0, 0, 0), new Uop(1, 0, 0));
    }

    private int[] times(byte[] input) {
        int[] out = new int[16];
        for (int o = 0; o < 16; o++) {
            for (int k = 0; k < 16; k++) {
                out[o] += input[k] * w[o * 16 + k];
            }
        }
        return out;
    }

    private static Gemm gemm(DependencyFlags deps, int uop) {
        return new Gemm(deps, false, UopLoop.single(uop), IndexFactors.ZERO, IndexFactors.ZERO, IndexFactors.ZERO);
    }

    @Test
    void eachInstructionRunsOnItsModuleAndQueuesJoinNeighbours() {
        assertEquals(Module.LOAD, Module.executing(Load.contiguous(NONE, BufferKind.INP, 0, 0, 1)));
        assertEquals(Module.LOAD, Module.executing(Load.contiguous(NONE, BufferKind.WGT, 0, 0, 1)));
        assertEquals(Module.COMPUTE, Module.executing(Load.contiguous(NONE, BufferKind.UOP, 0, 0, 1)));
        assertEquals(Module.COMPUTE, Module.executing(Load.contiguous(NONE, BufferKind.ACC, 0, 0, 1)));
        assertEquals(Module.COMPUTE, Module.executing(gemm(NONE, 0)));
        assertEquals(Module.COMPUTE, Module.executing(Alu.withImmediate(NONE, AluOp.ADD, UopLoop.single(0), IndexFactors.ZERO, 1)));
        assertEquals(Module.COMPUTE, Module.executing(new Finish(NONE)));
        assertEquals(Module.STORE, Module.executing(Store.contiguous(NONE, 0, 0, 1)));
        for (Module m : Module.values()) {
            m.popPrevQueue().ifPresent(q -> assertEquals(m, q.to));
            m.popNextQueue().ifPresent(q -> assertEquals(m, q.to));
            m.pushPrevQueue().ifPresent(q -> assertEquals(m, q.from));
            m.pushNextQueue().ifPresent(q -> assertEquals(m, q.from));
        }
        assertEquals(DependencyQueue.LOAD_TO_COMPUTE, Module.COMPUTE.popPrevQueue().orElseThrow());
        assertEquals(DependencyQueue.STORE_TO_COMPUTE, Module.COMPUTE.popNextQueue().orElseThrow());
        assertEquals(DependencyQueue.COMPUTE_TO_LOAD, Module.LOAD.popNextQueue().orElseThrow());
        assertEquals(DependencyQueue.COMPUTE_TO_STORE, Module.STORE.popPrevQueue().orElseThrow());
    }

    @Test
    void tokensThroughAllFourQueuesLetTheProgramRun() {
        List<Instruction> program = List.of(
                Load.contiguous(NONE, BufferKind.UOP, 0, 256, 2),
                Load.contiguous(NONE, BufferKind.WGT, 0, 1, 1),
                Load.contiguous(NONE.withPushNext(), BufferKind.INP, 0, 0, 1),
                gemm(NONE.withPopPrev().withPushNext(), 0),
                Store.contiguous(NONE.withPopPrev().withPushPrev(), 0, 100, 1),
                // compute may overwrite accumulator 0 only once the store has read it
                new Gemm(NONE.withPopNext().withPushPrev(), true, UopLoop.single(0), IndexFactors.ZERO, IndexFactors.ZERO, IndexFactors.ZERO),
                Load.contiguous(NONE.withPopNext(), BufferKind.INP, 0, 1, 1),
                new Finish(NONE));
        byte[] bytes = dram().bytes;
        SimulationResult result = simulator.run(program, bytes);
        int[] xw = times(x);
        for (int o = 0; o < 16; o++) {
            assertEquals((byte) xw[o], bytes[1600 + o], "stored lane " + o);
        }
        assertArrayEquals(new int[16], result.sram().accEntry(0));
        assertArrayEquals(y, result.sram().inputEntry(0));
        assertEquals(Map.of(), result.stats().leftoverTokens());
    }

    @Test
    void aMissingPushIsADeadlockNamingEveryBlockedInstruction() {
        List<Instruction> program = List.of(
                Load.contiguous(NONE, BufferKind.INP, 0, 0, 1), // forgot push_next
                Load.contiguous(NONE, BufferKind.UOP, 0, 256, 1),
                gemm(NONE.withPopPrev().withPushNext(), 0),
                Store.contiguous(NONE.withPopPrev(), 0, 100, 1));
        DeadlockException e = assertThrows(DeadlockException.class, () -> simulator.run(program, dram().bytes));
        assertEquals(List.of(
                new BlockedInstruction(Module.COMPUTE, 2, Opcode.GEMM, "GEMM", List.of(DependencyQueue.LOAD_TO_COMPUTE)),
                new BlockedInstruction(Module.STORE, 3, Opcode.STORE, "STORE", List.of(DependencyQueue.COMPUTE_TO_STORE))), e.blocked());
        assertTrue(e.getMessage().contains("deadlock with 2 instruction(s) left"), e.getMessage());
        assertTrue(e.getMessage().contains("COMPUTE blocked at instruction #2 (GEMM) waiting for a token on LOAD_TO_COMPUTE (load→compute)"), e.getMessage());
        assertTrue(e.getMessage().contains("STORE blocked at instruction #3 (STORE) waiting for a token on COMPUTE_TO_STORE"), e.getMessage());
    }

    @Test
    void modulesWaitingOnEachOtherDeadlock() {
        List<Instruction> program = List.of(
                Load.contiguous(NONE.withPopNext().withPushNext(), BufferKind.INP, 0, 0, 1),
                gemm(NONE.withPopPrev().withPushPrev(), 0));
        DeadlockException e = assertThrows(DeadlockException.class, () -> simulator.run(program, dram().bytes));
        assertEquals(2, e.blocked().size());
        assertEquals(new BlockedInstruction(Module.LOAD, 0, Opcode.LOAD, "LOAD INP", List.of(DependencyQueue.COMPUTE_TO_LOAD)), e.blocked().get(0));
        assertEquals(Module.COMPUTE, e.blocked().get(1).module());
    }

    @Test
    void deadlockAfterProgressNamesTheInstructionThatStarved() {
        List<Instruction> program = List.of(
                Load.contiguous(NONE, BufferKind.UOP, 0, 256, 1),
                Load.contiguous(NONE.withPushNext(), BufferKind.INP, 0, 0, 1),
                gemm(NONE.withPopPrev(), 0),
                gemm(NONE.withPopPrev(), 0));
        DeadlockException e = assertThrows(DeadlockException.class, () -> simulator.run(program, dram().bytes));
        assertEquals(List.of(new BlockedInstruction(Module.COMPUTE, 3, Opcode.GEMM, "GEMM", List.of(DependencyQueue.LOAD_TO_COMPUTE))), e.blocked());
    }

    @Test
    void tokensOrderAWriteAfterReadAcrossModules() {
        // load X into input 0, GEMM reads it into acc 0, then load Y over input 0 and GEMM it into acc 1; the
        // compute→load token keeps the second load from overwriting X before the first GEMM has read it
        List<Instruction> ordered = List.of(
                Load.contiguous(NONE, BufferKind.UOP, 0, 256, 2),
                Load.contiguous(NONE, BufferKind.WGT, 0, 1, 1),
                Load.contiguous(NONE.withPushNext(), BufferKind.INP, 0, 0, 1),
                gemm(NONE.withPopPrev().withPushPrev(), 0),
                Load.contiguous(NONE.withPopNext().withPushNext(), BufferKind.INP, 0, 1, 1),
                gemm(NONE.withPopPrev(), 1));
        Scratchpad sram = simulator.run(ordered, dram().bytes).sram();
        assertArrayEquals(times(x), sram.accEntry(0));
        assertArrayEquals(times(y), sram.accEntry(1));

        // drop that token and the load module, free to run ahead, overwrites X first: both GEMMs see Y
        List<Instruction> racy = List.of(ordered.get(0), ordered.get(1), ordered.get(2), gemm(NONE.withPopPrev(), 0),
                Load.contiguous(NONE.withPushNext(), BufferKind.INP, 0, 1, 1), ordered.get(5));
        Scratchpad raced = simulator.run(racy, dram().bytes).sram();
        assertArrayEquals(times(y), raced.accEntry(0));
    }

    @Test
    void flagsTowardsAMissingNeighbourAreRejected() {
        VtaProgramException load = assertThrows(VtaProgramException.class,
                () -> simulator.run(List.of(Load.contiguous(NONE.withPopPrev(), BufferKind.WGT, 0, 1, 1)), dram().bytes));
        assertTrue(load.getMessage().contains("instruction #0 (LOAD WGT): pop_prev_dep is set but it runs on the load module, which has no previous module"),
                load.getMessage());
        VtaProgramException store = assertThrows(VtaProgramException.class,
                () -> simulator.run(List.of(new Finish(NONE), Store.contiguous(NONE.withPushNext(), 0, 0, 1)), dram().bytes));
        assertTrue(store.getMessage().contains("instruction #1 (STORE): push_next_dep"), store.getMessage());
    }

    @Test
    void unpoppedTokensAreReported() {
        SimulationResult result = simulator.run(List.of(Load.contiguous(NONE.withPushNext(), BufferKind.INP, 0, 0, 1),
                Load.contiguous(NONE.withPushNext(), BufferKind.INP, 1, 1, 1)), dram().bytes);
        assertEquals(Map.of(DependencyQueue.LOAD_TO_COMPUTE, 2), result.stats().leftoverTokens());
    }
}
