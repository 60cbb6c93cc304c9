package dev.relayfarm.vta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntBinaryOperator;
import org.junit.jupiter.api.Test;

/** Each ALU op, lane by lane, against Java's own int arithmetic, with a tensor operand and with an immediate. */
class AluTest {
    private static final DependencyFlags NONE = DependencyFlags.NONE;
    private static final int[] A = {0, 1, -1, 7, -7, 100, -100, 12345, -12345, Integer.MAX_VALUE, Integer.MIN_VALUE, 2, -2, 65536, -65537, 31};
    private static final int[] B = {5, -3, 1, 1, 1, 2, 2, -1, 3, 1, 1, 31, 31, 40, 40, -4};

    private final VtaSimulator simulator = new VtaSimulator(VtaConfig.defaults());

    /** acc entry 0 = A, acc entry 1 = B; micro-op 0 is (dst 0, src 1). */
    private int[] run(Alu alu) {
        DramImage dram = new DramImage(256).putInts(0, A).putInts(64, B).putUops(128, new Uop(0, 1, 0));
        List<Instruction> program = List.of(Load.contiguous(NONE, BufferKind.ACC, 0, 0, 2), Load.contiguous(NONE, BufferKind.UOP, 0, 32, 1), alu);
        return simulator.run(program, dram.bytes).sram().accEntry(0);
    }

    private int[] withTensor(AluOp op) {
        return run(Alu.withTensor(NONE, op, UopLoop.single(0), IndexFactors.ZERO, IndexFactors.ZERO));
    }

    private int[] withImmediate(AluOp op, int immediate) {
        return run(Alu.withImmediate(NONE, op, UopLoop.single(0), IndexFactors.ZERO, immediate));
    }

    private static int[] expected(IntBinaryOperator f, int[] operands) {
        int[] out = new int[16];
        for (int i = 0; i < 16; i++) {
            out[i] = f.applyAsInt(A[i], operands[i]);
        }
        return out;
    }

    private static int[] broadcast(int value) {
        int[] out = new int[16];
        Arrays.fill(out, value);
        return out;
    }

    @Test
    void minAndMax() {
        assertArrayEquals(expected(Math::min, B), withTensor(AluOp.MIN));
        assertArrayEquals(expected(Math::max, B), withTensor(AluOp.MAX));
        assertArrayEquals(expected(Math::min, broadcast(-5)), withImmediate(AluOp.MIN, -5));
    }

    @Test
    void maxWithImmediateZeroIsRelu() {
        int[] relu = withImmediate(AluOp.MAX, 0);
        for (int i = 0; i < 16; i++) {
            assertEquals(A[i] < 0 ? 0 : A[i], relu[i], "lane " + i);
        }
    }

    @Test
    void addWrapsAtThirtyTwoBits() {
        int[] sum = withTensor(AluOp.ADD);
        assertArrayEquals(expected(Integer::sum, B), sum);
        assertEquals(Integer.MIN_VALUE, sum[9], "MAX_VALUE + 1 wraps");
        assertArrayEquals(expected(Integer::sum, broadcast(-32768)), withImmediate(AluOp.ADD, -32768));
    }

    @Test
    void mulKeepsTheLowThirtyTwoBits() {
        assertArrayEquals(expected((a, b) -> a * b, B), withTensor(AluOp.MUL));
        assertArrayEquals(expected((a, b) -> a * b, broadcast(3)), withImmediate(AluOp.MUL, 3));
        assertEquals((int) (65536L * 40), withTensor(AluOp.MUL)[13]);
    }

    @Test
    void shrIsArithmeticAndANegativeAmountShiftsLeft() {
        int[] byTwo = withImmediate(AluOp.SHR, 2);
        assertEquals(-2, byTwo[4], "-7 >> 2 rounds toward minus infinity");
        assertEquals(-25, byTwo[6]);
        assertEquals(-1, byTwo[2], "-1 stays -1");
        assertEquals(1, byTwo[3]);
        int[] left = withImmediate(AluOp.SHR, -3);
        assertEquals(-56, left[4], "-7 << 3");
        assertEquals(800, left[5]);
        int[] tensor = withTensor(AluOp.SHR);
        assertEquals(-1, tensor[12], "-2 >> 31");
        assertEquals(0, tensor[13], "65536 >> 40 saturates to >> 31, not Java's >> (40 & 31)");
        assertEquals(-1, tensor[14], "a negative shifted right by 40 is -1");
        assertEquals(31 << 4, tensor[15], "amount -4 shifts left by 4");
        assertEquals(-12345 >> 3, tensor[8]);
    }

    @Test
    void loopFactorsVisitEveryDestination() {
        // six accumulator entries counting 0..95, add 10 to entries 0..5 via iter_out 2 × iter_in 3 and dst factors (3, 1)
        int[] values = new int[7 * 16];
        for (int i = 0; i < values.length; i++) {
            values[i] = i;
        }
        DramImage dram = new DramImage(1024).putInts(0, values).putUops(512, new Uop(0, 0, 0));
        List<Instruction> program = new ArrayList<>(List.of(Load.contiguous(NONE, BufferKind.ACC, 0, 0, 7), Load.contiguous(NONE, BufferKind.UOP, 0, 128, 1),
                Alu.withImmediate(NONE, AluOp.ADD, new UopLoop(0, 1, 2, 3), new IndexFactors(3, 1), 10)));
        SimulationResult result = simulator.run(program, dram.bytes);
        for (int entry = 0; entry < 7; entry++) {
            int[] acc = result.sram().accEntry(entry);
            for (int lane = 0; lane < 16; lane++) {
                assertEquals(entry * 16 + lane + (entry < 6 ? 10 : 0), acc[lane], "entry " + entry + " lane " + lane);
            }
        }
        assertEquals(6, result.stats().aluOps());
    }
}
