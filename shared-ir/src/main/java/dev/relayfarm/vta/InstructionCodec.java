package dev.relayfarm.vta;

/**
 * Packs instructions into 128-bit words and back. The layout is this simulator's own (VTA-like widths sized for the
 * default configuration, not VTA's exact bit positions); bit 0 is the low bit of {@link InstructionWord#low()}.
 *
 * <pre>
 * all     [0,3) opcode  3 pop_prev  4 pop_next  5 push_prev  6 push_next
 * LOAD    [7,9) buffer  [9,25) sram_base  [25,57) dram_base  [57,64) zero
 * STORE     (as LOAD, buffer bits zero)
 *         [64,80) y_size  [80,96) x_size  [96,112) x_stride
 *         [112,116) y_pad_0  [116,120) y_pad_1  [120,124) x_pad_0  [124,128) x_pad_1   (all zero for STORE)
 * GEMM    7 reset  [8,21) uop_bgn  [21,35) uop_end  [35,49) iter_out  [49,63) iter_in  63 zero
 *         [64,75) dst_factor_out  [75,86) dst_factor_in  [86,97) src_factor_out  [97,108) src_factor_in
 *         [108,118) wgt_factor_out  [118,128) wgt_factor_in
 * ALU     7 zero, [8,63) as GEMM, [64,108) as GEMM
 *         [108,111) alu_opcode  111 use_imm  [112,128) imm (two's complement, -32768..32767)
 * FINISH  nothing beyond the common bits
 * </pre>
 *
 * Encoding rejects a field that does not fit its width, naming the field, rather than silently dropping high bits.
 */
public final class InstructionCodec {
    private InstructionCodec() {
    }

    public static InstructionWord encode(Instruction instruction) {
        Packer p = new Packer(instruction.describe());
        p.put("opcode", instruction.opcode().code, 0, 3);
        DependencyFlags d = instruction.deps();
        p.put("pop_prev_dep", d.popPrev() ? 1 : 0, 3, 1);
        p.put("pop_next_dep", d.popNext() ? 1 : 0, 4, 1);
        p.put("push_prev_dep", d.pushPrev() ? 1 : 0, 5, 1);
        p.put("push_next_dep", d.pushNext() ? 1 : 0, 6, 1);
        switch (instruction) {
            case Load l -> {
                p.put("buffer", l.buffer().ordinal(), 7, 2);
                memory(p, l.sramBase(), l.dramBase(), l.ySize(), l.xSize(), l.xStride());
                p.put("y_pad_0", l.yPad0(), 112, 4);
                p.put("y_pad_1", l.yPad1(), 116, 4);
                p.put("x_pad_0", l.xPad0(), 120, 4);
                p.put("x_pad_1", l.xPad1(), 124, 4);
            }
            case Store s -> memory(p, s.sramBase(), s.dramBase(), s.ySize(), s.xSize(), s.xStride());
            case Gemm g -> {
                p.put("reset", g.reset() ? 1 : 0, 7, 1);
                loop(p, g.loop(), g.dst(), g.src());
                p.put("wgt_factor_out", g.wgt().out(), 108, 10);
                p.put("wgt_factor_in", g.wgt().in(), 118, 10);
            }
            case Alu a -> {
                loop(p, a.loop(), a.dst(), a.src());
                p.put("alu_opcode", a.op().ordinal(), 108, 3);
                p.put("use_imm", a.useImmediate() ? 1 : 0, 111, 1);
                if (a.immediate() < -(1 << 15) || a.immediate() >= 1 << 15) {
                    throw new IllegalArgumentException("cannot encode " + a.describe() + ": field imm = " + a.immediate()
                            + " does not fit 16 signed bits (-32768..32767)");
                }
                p.put("imm", a.immediate() & 0xFFFF, 112, 16);
            }
            case Finish f -> {
            }
        }
        return new InstructionWord(p.low, p.high);
    }

    public static Instruction decode(InstructionWord word) {
        Unpacker u = new Unpacker(word);
        Opcode opcode;
        try {
            opcode = Opcode.ofCode((int) u.get(0, 3));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot decode " + word + ": " + e.getMessage(), e);
        }
        DependencyFlags deps = new DependencyFlags(u.get(3, 1) == 1, u.get(4, 1) == 1, u.get(5, 1) == 1, u.get(6, 1) == 1);
        return switch (opcode) {
            case LOAD -> new Load(deps, BufferKind.values()[(int) u.get(7, 2)], (int) u.get(9, 16), u.get(25, 32), (int) u.get(64, 16),
                    (int) u.get(80, 16), (int) u.get(96, 16), (int) u.get(112, 4), (int) u.get(116, 4), (int) u.get(120, 4), (int) u.get(124, 4));
            case STORE -> new Store(deps, (int) u.get(9, 16), u.get(25, 32), (int) u.get(64, 16), (int) u.get(80, 16), (int) u.get(96, 16));
            case GEMM -> new Gemm(deps, u.get(7, 1) == 1, loop(u), new IndexFactors((int) u.get(64, 11), (int) u.get(75, 11)),
                    new IndexFactors((int) u.get(86, 11), (int) u.get(97, 11)), new IndexFactors((int) u.get(108, 10), (int) u.get(118, 10)));
            case ALU -> {
                int aluCode = (int) u.get(108, 3);
                if (aluCode >= AluOp.values().length) {
                    throw new IllegalArgumentException("cannot decode " + word + ": no ALU op has code " + aluCode);
                }
                yield new Alu(deps, AluOp.values()[aluCode], loop(u), new IndexFactors((int) u.get(64, 11), (int) u.get(75, 11)),
                        new IndexFactors((int) u.get(86, 11), (int) u.get(97, 11)), u.get(111, 1) == 1, (short) u.get(112, 16));
            }
            case FINISH -> new Finish(deps);
        };
    }

    private static void memory(Packer p, int sramBase, long dramBase, int ySize, int xSize, int xStride) {
        p.put("sram_base", sramBase, 9, 16);
        p.put("dram_base", dramBase, 25, 32);
        p.put("y_size", ySize, 64, 16);
        p.put("x_size", xSize, 80, 16);
        p.put("x_stride", xStride, 96, 16);
    }

    private static void loop(Packer p, UopLoop loop, IndexFactors dst, IndexFactors src) {
        p.put("uop_bgn", loop.uopBegin(), 8, 13);
        p.put("uop_end", loop.uopEnd(), 21, 14);
        p.put("iter_out", loop.iterOut(), 35, 14);
        p.put("iter_in", loop.iterIn(), 49, 14);
        p.put("dst_factor_out", dst.out(), 64, 11);
        p.put("dst_factor_in", dst.in(), 75, 11);
        p.put("src_factor_out", src.out(), 86, 11);
        p.put("src_factor_in", src.in(), 97, 11);
    }

    private static UopLoop loop(Unpacker u) {
        return new UopLoop((int) u.get(8, 13), (int) u.get(21, 14), (int) u.get(35, 14), (int) u.get(49, 14));
    }

    /** Fields never straddle bit 64, which keeps both directions to one shift and mask. */
    private static final class Packer {
        private final String instruction;
        long low;
        long high;

        Packer(String instruction) {
            this.instruction = instruction;
        }

        void put(String field, long value, int at, int bits) {
            if (value < 0 || value >= 1L << bits) {
                throw new IllegalArgumentException("cannot encode " + instruction + ": field " + field + " = " + value + " does not fit "
                        + bits + " bits (0.." + ((1L << bits) - 1) + ")");
            }
            if (at >= 64) {
                high |= value << (at - 64);
            } else {
                low |= value << at;
            }
        }
    }

    private record Unpacker(InstructionWord word) {
        long get(int at, int bits) {
            long mask = (1L << bits) - 1;
            return at >= 64 ? word.high() >>> (at - 64) & mask : word.low() >>> at & mask;
        }
    }
}
