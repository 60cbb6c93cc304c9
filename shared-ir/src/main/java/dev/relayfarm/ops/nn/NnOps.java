package dev.relayfarm.ops.nn;

import dev.relayfarm.ops.OpDef;
import java.util.List;

/**
 * Neural-network operators (nn.conv2d, nn.dense, pooling, normalization, ...). Each operator lives
 * in its own class in {@code dev.relayfarm.ops.nn} (attributes record, relation, kernel); this list
 * is the single place that decides which of them the registry holds.
 */
public final class NnOps {
    private NnOps() {}

    /** Every nn operator, in registration order (the kernel-coverage test walks this list). */
    public static List<OpDef<?>> defs() {
        return List.of(
                Conv2D.def(),
                Dense.def(),
                Matmul.def(),
                BatchMatmul.def(),
                BiasAdd.def(),
                Activations.relu(),
                Activations.leakyRelu(),
                Activations.prelu(),
                Softmax.softmax(),
                Softmax.logSoftmax(),
                CrossEntropy.crossEntropy(),
                CrossEntropy.withLogits(),
                Pool2D.maxPool(),
                Pool2D.avgPool(),
                Pool3D.maxPool(),
                Pool3D.avgPool(),
                MaxPool2DWithArgmax.def(),
                Pool2DGrad.maxPoolGrad(),
                Pool2DGrad.avgPoolGrad(),
                GlobalPool2D.avg(),
                GlobalPool2D.max(),
                Conv2DTranspose.def(),
                Conv3DTranspose.def(),
                Normalization.batchNorm(),
                Normalization.layerNorm(),
                Lrn.def(),
                Dropout.def(),
                Pad.def(),
                BatchFlatten.def(),
                Conv2DNCHWc.def(),
                WinogradConv2D.weightTransform(),
                WinogradConv2D.def(),
                SimulatedQuantize.def());
    }

}
