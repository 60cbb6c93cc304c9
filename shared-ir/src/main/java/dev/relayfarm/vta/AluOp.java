package dev.relayfarm.vta;

/** The vector ALU's element-wise operations on int32 accumulators; {@link #ordinal()} is the 3-bit encoded code. */
public enum AluOp {
    MIN, MAX, ADD,
    /** arithmetic shift right by the operand; a negative operand shifts left, as VTA's ALU does */
    SHR,
    /** the low 32 bits of the product */
    MUL
}
