package dev.relayfarm.ops;

/** Element-wise and broadcasting operators (add, exp, where, cast, ...). */
final class ElementwiseOps {
    private ElementwiseOps() {}

    static void register(OpRegistry.Builder r) {
    }
}
