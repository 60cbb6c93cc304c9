package dev.relayfarm.vta;

/**
 * Matrix multiply-accumulate over a micro-op loop: for every (i0, i1, uop) step, accumulator entry
 * {@code uop.dst + dst.offset(i0, i1)} += input entry {@code uop.src + src.offset(i0, i1)} × weight entry
 * {@code uop.wgt + wgt.offset(i0, i1)}ᵀ, i.e. acc[b][o] += Σₖ inp[b][k] · wgt[o][k] in int32. With {@code reset}
 * the step zeroes the accumulator entry instead, which is how VTA initialises an output tile.
 */
public record Gemm(DependencyFlags deps, boolean reset, UopLoop loop, IndexFactors dst, IndexFactors src, IndexFactors wgt) implements Instruction {
}
