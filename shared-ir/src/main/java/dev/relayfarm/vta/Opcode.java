package dev.relayfarm.vta;

/** The instruction kinds; {@link #code} is the 3-bit field at the bottom of an encoded instruction. */
public enum Opcode {
    LOAD(0), STORE(1), GEMM(2), FINISH(3), ALU(4);

    public final int code;

    Opcode(int code) {
        this.code = code;
    }

    public static Opcode ofCode(int code) {
        for (Opcode op : values()) {
            if (op.code == code) {
                return op;
            }
        }
        throw new IllegalArgumentException("no VTA opcode has code " + code);
    }
}
