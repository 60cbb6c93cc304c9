package dev.relayfarm.kernel.loop;

/** How a loop runs: plainly, split across threads, as SIMD lanes, or unrolled by the compiler. */
public enum ForKind { SERIAL, PARALLEL, VECTORIZED, UNROLLED }
