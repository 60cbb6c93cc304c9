package dev.relayfarm.ops;

/** Neural-network operators (nn.conv2d, nn.dense, pooling, normalization, ...). */
final class NnOps {
    private NnOps() {}

    static void register(OpRegistry.Builder r) {
    }
}
