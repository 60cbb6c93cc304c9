package dev.relayfarm.vta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A quantized dense layer with ReLU as a VTA program: out = min(relu(x · Wᵀ) >> 6, 127) as int8, for 4 rows of 32
 * input channels and 32 output channels, checked against the same layer written as plain Java loops.
 */
class EndToEndTest {
    private static final int ROWS = 4, CHANNELS_IN = 32, CHANNELS_OUT = 32, SHIFT = 6;
    private static final int X_AT = 0, W_AT = 1024, UOP_AT = 3072, OUT_AT = 4096;
    private static final DependencyFlags NONE = DependencyFlags.NONE;

    @Test
    void denseReluLayerMatchesJavaReference() {
        Random random = new Random(42);
        byte[] x = DramImage.randomInt8(random, ROWS * CHANNELS_IN);
        byte[] w = DramImage.randomInt8(random, CHANNELS_OUT * CHANNELS_IN);

        // VTA layout: input entry (i, k) = x[i][k·16 .. k·16+15]; weight entry (j, k) = the 16×16 block W[j·16.., k·16..]
        byte[] wBlocks = new byte[w.length];
        for (int j = 0; j < 2; j++) {
            for (int k = 0; k < 2; k++) {
                for (int o = 0; o < 16; o++) {
                    for (int kk = 0; kk < 16; kk++) {
                        wBlocks[(j * 2 + k) * 256 + o * 16 + kk] = w[(j * 16 + o) * CHANNELS_IN + k * 16 + kk];
                    }
                }
            }
        }
        DramImage dram = new DramImage(8192).putBytes(X_AT, x).putBytes(W_AT, wBlocks)
                // GEMM micro-ops walk the reduction blocks k; micro-op 2 addresses accumulator 0 alone for reset and ALU
                .putUops(UOP_AT, new Uop(0, 0, 0), new Uop(0, 1, 1), new Uop(0, 0, 0));
        UopLoop gemmLoop = new UopLoop(0, 2, ROWS, 2);
        UopLoop everyAcc = new UopLoop(2, 3, ROWS, 2);
        IndexFactors accOfRowAndBlock = new IndexFactors(2, 1);
        List<Instruction> program = List.of(
                Load.contiguous(NONE, BufferKind.UOP, 0, UOP_AT / 4, 3),
                Load.contiguous(NONE, BufferKind.WGT, 0, W_AT / 256, 4),
                Load.contiguous(NONE.withPushNext(), BufferKind.INP, 0, X_AT / 16, ROWS * 2),
                new Gemm(NONE, true, everyAcc, accOfRowAndBlock, IndexFactors.ZERO, IndexFactors.ZERO),
                new Gemm(NONE.withPopPrev(), false, gemmLoop, accOfRowAndBlock, new IndexFactors(2, 0), new IndexFactors(0, 2)),
                Alu.withImmediate(NONE, AluOp.MAX, everyAcc, accOfRowAndBlock, 0),
                Alu.withImmediate(NONE, AluOp.SHR, everyAcc, accOfRowAndBlock, SHIFT),
                Alu.withImmediate(NONE.withPushNext(), AluOp.MIN, everyAcc, accOfRowAndBlock, 127),
                Store.contiguous(NONE.withPopPrev().withPushPrev(), 0, OUT_AT / 16, ROWS * 2),
                new Finish(NONE.withPopNext()));
        // the program survives its own encoding
        List<Instruction> decoded = program.stream().map(InstructionCodec::encode).map(InstructionCodec::decode).toList();
        assertEquals(program, decoded);

        SimulationResult result = new VtaSimulator(VtaConfig.defaults()).run(decoded, dram.bytes);

        for (int i = 0; i < ROWS; i++) {
            for (int n = 0; n < CHANNELS_OUT; n++) {
                int sum = 0;
                for (int c = 0; c < CHANNELS_IN; c++) {
                    sum += x[i * CHANNELS_IN + c] * w[n * CHANNELS_IN + c];
                }
                byte expected = (byte) Math.min(Math.max(sum, 0) >> SHIFT, 127);
                assertEquals(expected, dram.bytes[OUT_AT + i * CHANNELS_OUT + n], "row " + i + " channel " + n);
            }
        }
        ExecutionStats stats = result.stats();
        assertEquals(Map.of(), stats.leftoverTokens());
        assertEquals(8 + 16, stats.gemmOps());
        assertEquals(3 * 8, stats.aluOps());
        assertEquals(ROWS * CHANNELS_OUT, stats.storedBytes());
        assertEquals(Map.of(BufferKind.UOP, 12L, BufferKind.WGT, 1024L, BufferKind.INP, 128L), stats.loadedBytes());
        assertEquals(stats.totalCycles(), stats.finishCycle().orElseThrow());
        assertTrue(stats.totalCycles() > 0);
    }
}
