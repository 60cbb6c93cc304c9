package dev.relayfarm.vta;

/**
 * The iteration space of a GEMM or ALU instruction: for i0 in [0, iterOut), for i1 in [0, iterIn), for each micro-op
 * in [uopBegin, uopEnd). Micro-ops hold base indices; {@link IndexFactors} add the loop's contribution.
 */
public record UopLoop(int uopBegin, int uopEnd, int iterOut, int iterIn) {
    public UopLoop {
        if (uopBegin < 0 || uopEnd < uopBegin) {
            throw new IllegalArgumentException("micro-op range [" + uopBegin + ", " + uopEnd + ") must satisfy 0 <= uop_bgn <= uop_end");
        }
        if (iterOut < 0 || iterIn < 0) {
            throw new IllegalArgumentException("loop extents iter_out=" + iterOut + ", iter_in=" + iterIn + " must be >= 0");
        }
    }

    /** One pass over a single micro-op. */
    public static UopLoop single(int uop) {
        return new UopLoop(uop, uop + 1, 1, 1);
    }

    public long iterations() {
        return (long) iterOut * iterIn * (uopEnd - uopBegin);
    }
}
