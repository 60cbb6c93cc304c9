package dev.relayfarm.passes;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.Op;
import dev.relayfarm.ir.TensorType;
import dev.relayfarm.kernel.template.DepthwiseConv2dNCHWcTemplate;
import dev.relayfarm.ops.nn.Conv2DNCHWc;
import dev.relayfarm.ops.registry.OpRegistry;
import dev.relayfarm.types.InferResult;
import java.util.Arrays;

/**
 * Calls whose kernel copies their data argument into a padded buffer of its own before the main loop: a padded depthwise
 * {@code nn.contrib_conv2d_NCHWc} (the depthwise template's padding stage). An injective producer of that argument
 * (ShuffleNet's channel shuffle, reshape-transpose-reshape between layout transforms) computed inside that copy costs
 * one gather per element instead of a kernel of its own that writes the whole tensor and has it read again, so
 * {@link FusionPartition} fuses such a producer into the convolution.
 *
 * <p>Only the depthwise template: its padding stage runs once per input element, whereas an unpadded convolution, or one
 * no template covers, would compute the producer's index arithmetic in its reduction loop, once per multiply-add.
 * Which calls those are is the template's own test ({@link DepthwiseConv2dNCHWcTemplate#covers}).
 */
final class PaddedDataCopy {
    private PaddedDataCopy() {}

    /** Whether {@code c} is a padded depthwise NCHWc convolution on float32, typed by {@code types}. */
    static boolean copiesData(Call c, InferResult types) {
        if (!(c.callee() instanceof Op op) || !op.name().equals(Conv2DNCHWc.NAME) || c.args().size() != 2) return false;
        if (!(types.typeOf(c.args().get(0)) instanceof TensorType x) || !(types.typeOf(c.args().get(1)) instanceof TensorType w)) return false;
        if (x.rank() != 5 || w.rank() != 6 || !x.isStatic() || !w.isStatic() || !x.dtype().equals(DType.FLOAT32) || !w.dtype().equals(DType.FLOAT32)) {
            return false;
        }
        Conv2DNCHWc.Conv2DNCHWcAttrs a = (Conv2DNCHWc.Conv2DNCHWcAttrs) OpRegistry.get(Conv2DNCHWc.NAME).parseAttrs(c.attrs());
        boolean depthwise = DepthwiseConv2dNCHWcTemplate.covers(Arrays.stream(x.staticShape()).boxed().toList(),
                Arrays.stream(w.staticShape()).boxed().toList(), x.dtype(), a);
        boolean padded = false;
        for (int p : a.padding()) padded |= p > 0;
        return depthwise && padded;
    }
}
