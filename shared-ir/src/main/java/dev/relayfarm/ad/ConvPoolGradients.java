package dev.relayfarm.ad;

/** Gradients of convolutions and pooling. */
final class ConvPoolGradients {
    private ConvPoolGradients() {}

    static void register(OpGradients.Registrar r) {
    }
}
