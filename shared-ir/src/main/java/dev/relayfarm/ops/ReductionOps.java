package dev.relayfarm.ops;

/** Reductions (sum, mean, max, argmax, variance, ...). */
final class ReductionOps {
    private ReductionOps() {}

    static void register(OpRegistry.Builder r) {
    }
}
