package dev.relayfarm.vta;

/** One VTA instruction. Every kind carries the four dependency flags the decoupled modules synchronise on. */
public sealed interface Instruction permits Load, Store, Gemm, Alu, Finish {
    DependencyFlags deps();

    default Opcode opcode() {
        return switch (this) {
            case Load l -> Opcode.LOAD;
            case Store s -> Opcode.STORE;
            case Gemm g -> Opcode.GEMM;
            case Alu a -> Opcode.ALU;
            case Finish f -> Opcode.FINISH;
        };
    }

    /** The instruction as messages name it, e.g. "LOAD INP" or "ALU MAX". */
    default String describe() {
        return switch (this) {
            case Load l -> "LOAD " + l.buffer();
            case Store s -> "STORE";
            case Gemm g -> g.reset() ? "GEMM reset" : "GEMM";
            case Alu a -> "ALU " + a.op() + (a.useImmediate() ? " imm " + a.immediate() : "");
            case Finish f -> "FINISH";
        };
    }
}
