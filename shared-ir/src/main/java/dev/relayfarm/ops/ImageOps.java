package dev.relayfarm.ops;

/** Image operators (image.resize2d). */
final class ImageOps {
    private ImageOps() {}

    static void register(OpRegistry.Builder r) {
    }
}
