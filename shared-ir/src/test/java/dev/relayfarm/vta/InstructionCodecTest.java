package dev.relayfarm.vta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class InstructionCodecTest {
    private static final DependencyFlags ALL = new DependencyFlags(true, true, true, true);

    private static void roundTrips(Instruction instruction) {
        assertEquals(instruction, InstructionCodec.decode(InstructionCodec.encode(instruction)));
    }

    @Test
    void everyKindRoundTripsAtItsWidestFields() {
        roundTrips(new Load(ALL, BufferKind.WGT, 65535, 0xFFFF_FFFFL, 65535, 65535, 65535, 15, 15, 15, 15));
        roundTrips(new Load(DependencyFlags.NONE, BufferKind.UOP, 0, 0, 0, 0, 0, 0, 0, 0, 0));
        roundTrips(new Store(ALL, 65535, 0xFFFF_FFFFL, 65535, 65535, 65535));
        roundTrips(new Gemm(ALL, true, new UopLoop(8191, 16383, 16383, 16383), new IndexFactors(2047, 2047), new IndexFactors(2047, 2047),
                new IndexFactors(1023, 1023)));
        roundTrips(new Alu(ALL, AluOp.MUL, new UopLoop(8191, 16383, 16383, 16383), new IndexFactors(2047, 2047), new IndexFactors(2047, 2047),
                true, -32768));
        roundTrips(Alu.withImmediate(DependencyFlags.NONE, AluOp.SHR, UopLoop.single(0), IndexFactors.ZERO, 32767));
        roundTrips(new Finish(ALL));
    }

    @Test
    void commonBitsSitAtTheBottom() {
        InstructionWord w = InstructionCodec.encode(new Finish(DependencyFlags.NONE.withPushNext()));
        assertEquals(Opcode.FINISH.code | 1L << 6, w.low());
        assertEquals(0, w.high());
        InstructionWord alu = InstructionCodec.encode(Alu.withImmediate(DependencyFlags.NONE, AluOp.ADD, new UopLoop(0, 0, 0, 0), IndexFactors.ZERO, -1));
        assertEquals(0xFFFFL << 48 | 1L << 47 | (long) AluOp.ADD.ordinal() << 44, alu.high());
    }

    @Test
    void randomInstructionsRoundTrip() {
        Random random = new Random(21);
        List<Instruction> all = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            DependencyFlags deps = new DependencyFlags(random.nextBoolean(), random.nextBoolean(), random.nextBoolean(), random.nextBoolean());
            int begin = random.nextInt(8192);
            UopLoop loop = new UopLoop(begin, begin + random.nextInt(16384 - begin), random.nextInt(16384), random.nextInt(16384));
            IndexFactors dst = new IndexFactors(random.nextInt(2048), random.nextInt(2048));
            IndexFactors src = new IndexFactors(random.nextInt(2048), random.nextInt(2048));
            all.add(switch (random.nextInt(5)) {
                case 0 -> new Load(deps, BufferKind.values()[random.nextInt(4)], random.nextInt(65536), random.nextLong(1L << 32), random.nextInt(65536),
                        random.nextInt(65536), random.nextInt(65536), random.nextInt(16), random.nextInt(16), random.nextInt(16), random.nextInt(16));
                case 1 -> new Store(deps, random.nextInt(65536), random.nextLong(1L << 32), random.nextInt(65536), random.nextInt(65536), random.nextInt(65536));
                case 2 -> new Gemm(deps, random.nextBoolean(), loop, dst, src, new IndexFactors(random.nextInt(1024), random.nextInt(1024)));
                case 3 -> new Alu(deps, AluOp.values()[random.nextInt(5)], loop, dst, src, random.nextBoolean(), random.nextInt(65536) - 32768);
                default -> new Finish(deps);
            });
        }
        for (Instruction instruction : all) {
            roundTrips(instruction);
        }
    }

    private static void rejects(Instruction instruction, String field) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> InstructionCodec.encode(instruction));
        assertTrue(e.getMessage().contains("field " + field + " ="), e.getMessage());
    }

    @Test
    void outOfRangeFieldsAreRejectedByName() {
        rejects(new Load(DependencyFlags.NONE, BufferKind.INP, 0, 0, 65536, 1, 1, 0, 0, 0, 0), "y_size");
        rejects(new Load(DependencyFlags.NONE, BufferKind.INP, 65536, 0, 1, 1, 1, 0, 0, 0, 0), "sram_base");
        rejects(new Load(DependencyFlags.NONE, BufferKind.INP, 0, 1L << 32, 1, 1, 1, 0, 0, 0, 0), "dram_base");
        rejects(new Load(DependencyFlags.NONE, BufferKind.INP, 0, 0, 1, 1, 1, 0, 0, 16, 0), "x_pad_0");
        rejects(new Store(DependencyFlags.NONE, 0, 0, 1, 1, 70000), "x_stride");
        rejects(new Gemm(DependencyFlags.NONE, false, new UopLoop(8192, 8192, 1, 1), IndexFactors.ZERO, IndexFactors.ZERO, IndexFactors.ZERO), "uop_bgn");
        rejects(new Gemm(DependencyFlags.NONE, false, UopLoop.single(0), IndexFactors.ZERO, IndexFactors.ZERO, new IndexFactors(0, 1024)), "wgt_factor_in");
        rejects(new Gemm(DependencyFlags.NONE, false, new UopLoop(0, 1, 16384, 1), IndexFactors.ZERO, IndexFactors.ZERO, IndexFactors.ZERO), "iter_out");
        rejects(Alu.withTensor(DependencyFlags.NONE, AluOp.ADD, UopLoop.single(0), new IndexFactors(2048, 0), IndexFactors.ZERO), "dst_factor_out");
        IllegalArgumentException imm = assertThrows(IllegalArgumentException.class,
                () -> InstructionCodec.encode(Alu.withImmediate(DependencyFlags.NONE, AluOp.ADD, UopLoop.single(0), IndexFactors.ZERO, 40000)));
        assertTrue(imm.getMessage().contains("field imm = 40000"), imm.getMessage());
    }

    @Test
    void decodingRejectsUnknownCodes() {
        IllegalArgumentException opcode = assertThrows(IllegalArgumentException.class, () -> InstructionCodec.decode(new InstructionWord(7, 0)));
        assertTrue(opcode.getMessage().contains("no VTA opcode has code 7"), opcode.getMessage());
        IllegalArgumentException alu = assertThrows(IllegalArgumentException.class,
                () -> InstructionCodec.decode(new InstructionWord(Opcode.ALU.code, 7L << 44)));
        assertTrue(alu.getMessage().contains("no ALU op has code 7"), alu.getMessage());
    }

    @Test
    void microOpsRoundTripAndRejectWideIndices() {
        Uop widest = new Uop(2047, 2047, 1023);
        assertEquals(widest, Uop.decode(widest.encode()));
        assertEquals(new Uop(5, 6, 7), Uop.decode(new Uop(5, 6, 7).encode()));
        assertEquals(5 | 6 << 11 | 7 << 22, new Uop(5, 6, 7).encode());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Uop(0, 0, 1024).encode());
        assertTrue(e.getMessage().contains("wgt = 1024"), e.getMessage());
    }
}
