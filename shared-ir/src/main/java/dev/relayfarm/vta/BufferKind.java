package dev.relayfarm.vta;

/** The on-chip buffers a LOAD can fill. Their order is their 2-bit code in an encoded LOAD. */
public enum BufferKind {
    /** micro-ops: the index triples GEMM and ALU loops walk */
    UOP,
    /** int8 activations */
    INP,
    /** int8 weights */
    WGT,
    /** int32 accumulators, which GEMM and ALU write and STORE reads */
    ACC
}
