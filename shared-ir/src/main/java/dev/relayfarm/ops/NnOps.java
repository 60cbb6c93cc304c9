package dev.relayfarm.ops;

import dev.relayfarm.ops.nn.Activations;
import dev.relayfarm.ops.nn.BatchMatmul;
import dev.relayfarm.ops.nn.BiasAdd;
import dev.relayfarm.ops.nn.BatchFlatten;
import dev.relayfarm.ops.nn.Conv2D;
import dev.relayfarm.ops.nn.Conv2DNCHWc;
import dev.relayfarm.ops.nn.Conv2DTranspose;
import dev.relayfarm.ops.nn.Dropout;
import dev.relayfarm.ops.nn.Dense;
import dev.relayfarm.ops.nn.GlobalPool2D;
import dev.relayfarm.ops.nn.Lrn;
import dev.relayfarm.ops.nn.Matmul;
import dev.relayfarm.ops.nn.Normalization;
import dev.relayfarm.ops.nn.Pad;
import dev.relayfarm.ops.nn.Pool2D;
import dev.relayfarm.ops.nn.Softmax;
import java.util.List;

/**
 * Neural-network operators (nn.conv2d, nn.dense, pooling, normalization, ...). Each operator lives
 * in its own class in {@code dev.relayfarm.ops.nn} (attributes record, relation, kernel); this list
 * is the single place that decides which of them the registry holds.
 */
final class NnOps {
    private NnOps() {}

    /** Every nn operator, in registration order (the kernel-coverage test walks this list). */
    static List<OpDef<?>> defs() {
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
                Pool2D.maxPool(),
                Pool2D.avgPool(),
                GlobalPool2D.avg(),
                GlobalPool2D.max(),
                Conv2DTranspose.def(),
                Normalization.batchNorm(),
                Normalization.layerNorm(),
                Lrn.def(),
                Dropout.def(),
                Pad.def(),
                BatchFlatten.def(),
                Conv2DNCHWc.def());
    }

    static void register(OpRegistry.Builder r) {
        for (OpDef<?> def : defs()) r.add(def);
    }
}
