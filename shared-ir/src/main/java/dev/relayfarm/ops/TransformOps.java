package dev.relayfarm.ops;

/** Shape and data-movement operators (reshape, transpose, concatenate, take, arange, ...). */
final class TransformOps {
    private TransformOps() {}

    static void register(OpRegistry.Builder r) {
    }
}
