/**
 * A SIMULATOR of a VTA-style deep-learning accelerator (after TVM's VTA, Moreau et al., "A Hardware-Software Blueprint
 * for Flexible Deep Learning Specialization"), in its default configuration: int8 inputs and weights, int32
 * accumulators, a 1×16×16 GEMM core. It is not the hardware, nor bit-compatible with VTA's instruction encoding: the
 * instruction set follows VTA's shape (LOAD, STORE, GEMM, ALU, FINISH with four dependency flags each, micro-op
 * driven two-level loops) so programs written against it exercise the same decoupled access-execute discipline.
 *
 * <p>{@link dev.relayfarm.vta.VtaSimulator} runs an instruction stream functionally over a DRAM byte array and, at the
 * same time, a simple event-driven cycle model in which the load, compute and store modules each keep a local clock.
 */
package dev.relayfarm.vta;
