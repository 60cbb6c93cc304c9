package dev.relayfarm.quantize;

import static dev.relayfarm.quantize.QuantizeText.assertRewrites;
import static dev.relayfarm.quantize.QuantizeText.f32;
import static dev.relayfarm.quantize.QuantizeText.meta;
import static dev.relayfarm.quantize.QuantizeText.spread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.interp.Interpreter;
import dev.relayfarm.interp.TensorValue;
import dev.relayfarm.ir.DType;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import dev.relayfarm.passes.PassException;
import dev.relayfarm.passes.PassResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Annotate and realize as Relay text before / after, and realize against the simulated program it implements. */
class QuantizePassesTest {
    private static final NDArray W0 = spread(1, 3, 2, 3, 3), B0 = spread(2, 3), W1 = spread(3, 4, 3, 3, 3), W2 = spread(4, 5, 64), B2 = spread(5, 5);

    /** conv (first) -> bias -> relu -> conv -> relu -> pool -> reshape -> dense -> add. */
    private static final String NET = """
            def @main(%x: Tensor[(1, 2, 8, 8), float32]) {
              %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1]);
              %1 = nn.bias_add(%0, meta[relay.Constant][1]);
              %2 = nn.relu(%1);
              %3 = nn.conv2d(%2, meta[relay.Constant][2], padding=[1, 1]);
              %4 = nn.relu(%3);
              %5 = nn.max_pool2d(%4, pool_size=[2, 2], strides=[2, 2]);
              %6 = reshape(%5, newshape=[1, 64]);
              %7 = nn.dense(%6, meta[relay.Constant][3]);
              add(%7, meta[relay.Constant][4])
            }
            """ + meta(W0, B0, W1, W2, B2);

    @Test
    void annotateSkipsTheFirstConvAndPlacesDataPointsAboveTransparentOps() {
        // both data points moved up over a relu: unsigned
        assertRewrites(new Annotate(QuantizeConfig.DEFAULT), NET, """
                def @main(%x: Tensor[(1, 2, 8, 8), float32]) {
                  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1]);
                  %1 = nn.bias_add(%0, meta[relay.Constant][1]);
                  %2 = annotation.simulated_quantize(%1, 0f, kind="activation", sign=False);
                  %3 = nn.relu(%2);
                  %4 = annotation.simulated_quantize(meta[relay.Constant][2], 0f, kind="weight", axis=0);
                  %5 = nn.conv2d(%3, %4, padding=[1, 1]);
                  %6 = annotation.simulated_quantize(%5, 0f, kind="activation", sign=False);
                  %7 = nn.relu(%6);
                  %8 = nn.max_pool2d(%7, pool_size=[2, 2], strides=[2, 2]);
                  %9 = reshape(%8, newshape=[1, 64]);
                  %10 = annotation.simulated_quantize(meta[relay.Constant][3], 0f, kind="weight", axis=0);
                  %11 = nn.dense(%9, %10);
                  add(%11, meta[relay.Constant][4])
                }
                """ + meta(W0, B0, W1, W2, B2));
    }

    @Test
    void annotateWithoutSkipsMarksTheModelInputAndPerTensorWeights() {
        QuantizeConfig all = QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of()).withSkipDenseLayers(Set.of(-1)).withPerChannelWeights(false);
        assertRewrites(new Annotate(all), NET, """
                def @main(%x: Tensor[(1, 2, 8, 8), float32]) {
                  %0 = annotation.simulated_quantize(%x, 0f, kind="input");
                  %1 = annotation.simulated_quantize(meta[relay.Constant][0], 0f, kind="weight");
                  %2 = nn.conv2d(%0, %1, padding=[1, 1]);
                  %3 = nn.bias_add(%2, meta[relay.Constant][1]);
                  %4 = annotation.simulated_quantize(%3, 0f, kind="activation", sign=False);
                  %5 = nn.relu(%4);
                  %6 = annotation.simulated_quantize(meta[relay.Constant][2], 0f, kind="weight");
                  %7 = nn.conv2d(%5, %6, padding=[1, 1]);
                  %8 = nn.relu(%7);
                  %9 = nn.max_pool2d(%8, pool_size=[2, 2], strides=[2, 2]);
                  %10 = reshape(%9, newshape=[1, 64]);
                  %11 = nn.dense(%10, meta[relay.Constant][3]);
                  add(%11, meta[relay.Constant][4])
                }
                """ + meta(W0, B0, W1, W2, B2));
    }

    @Test
    void annotateWithEverythingSkippedAnswersUnchanged() {
        IRModule in = QuantizeText.typed(NET);
        PassResult r = QuantizeText.run(new Annotate(QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of(0, 1)).withSkipDenseLayers(Set.of(0))), in);
        assertFalse(r.changed());
        assertSame(in, r.module());
    }

    /** Scales are powers of two, so the expected integers are exact: W / S, bias / (0.5 * S). */
    @Test
    void realizeDenseWithPerChannelWeightsAndAnInt32Bias() {
        NDArray w = f32(new int[] {2, 4}, 1, -1.5, 0.5, 0, 0.25, 0.25, -0.5, 0.75);
        NDArray s = f32(new int[] {2}, 0x1p-6, 0x1p-7);
        NDArray b = f32(new int[] {2}, 0.5, -0.25);
        NDArray wq = NDArray.fromLongs(DType.INT8, new int[] {2, 4}, new long[] {64, -96, 32, 0, 32, 32, -64, 96});
        NDArray bq = NDArray.fromLongs(DType.INT32, new int[] {2}, new long[] {64, -64});
        NDArray deq = f32(new int[] {2}, 0x1p-7, 0x1p-8);
        assertRewrites(new Realize(QuantizeConfig.Requantize.FIXED_POINT), """
                def @main(%x: Tensor[(1, 4), float32]) {
                  %0 = annotation.simulated_quantize(%x, 0.5f, kind="input");
                  %1 = annotation.simulated_quantize(meta[relay.Constant][0], meta[relay.Constant][1], kind="weight", axis=0);
                  %2 = nn.dense(%0, %1);
                  %3 = nn.bias_add(%2, meta[relay.Constant][2], axis=1);
                  nn.relu(%3)
                }
                """ + meta(w, s, b), """
                def @main(%x: Tensor[(1, 4), float32]) {
                  %0 = divide(%x, 0.5f);
                  %1 = round(%0);
                  %2 = clip(%1, a_min=-127f, a_max=127f);
                  %3 = cast(%2, dtype="int8");
                  %4 = nn.dense(%3, meta[relay.Constant][0], out_dtype="int32");
                  %5 = nn.bias_add(%4, meta[relay.Constant][1], axis=1);
                  %6 = nn.relu(%5);
                  %7 = cast(%6, dtype="float32");
                  multiply(%7, meta[relay.Constant][2])
                }
                """ + meta(wq, bq, deq));
    }

    /** The accumulator of a conv requantized for the next layer: 31-bit multiplier and shift per output channel. */
    @Test
    void realizeRequantizesAConvAccumulatorWithFixedPointMultipliers() {
        NDArray w = f32(new int[] {2, 1, 1, 1}, 1, 0.5);
        NDArray s = f32(new int[] {2}, 0x1p-6, 0x1p-7);
        NDArray wq = NDArray.fromLongs(DType.INT8, new int[] {2, 1, 1, 1}, new long[] {64, 64});
        // accumulator scales 0.25 * S = 2^-8, 2^-9; to 2^-3: m = 2^-5, 2^-6 = 2^30 * 2^-35, 2^30 * 2^-36
        NDArray m0 = NDArray.fromLongs(DType.INT64, new int[] {2, 1, 1}, new long[] {1L << 30, 1L << 30});
        NDArray half = NDArray.fromLongs(DType.INT64, new int[] {2, 1, 1}, new long[] {1L << 34, 1L << 35});
        NDArray shift = NDArray.fromLongs(DType.INT64, new int[] {2, 1, 1}, new long[] {35, 36});
        assertRewrites(new Realize(QuantizeConfig.Requantize.FIXED_POINT), """
                def @main(%x: Tensor[(1, 1, 2, 2), float32]) {
                  %0 = annotation.simulated_quantize(%x, 0.25f, kind="input");
                  %1 = annotation.simulated_quantize(meta[relay.Constant][0], meta[relay.Constant][1], kind="weight", axis=0);
                  %2 = nn.conv2d(%0, %1);
                  %3 = annotation.simulated_quantize(%2, 0.125f, kind="activation");
                  nn.max_pool2d(%3, pool_size=[2, 2])
                }
                """ + meta(w, s), """
                def @main(%x: Tensor[(1, 1, 2, 2), float32]) {
                  %0 = divide(%x, 0.25f);
                  %1 = round(%0);
                  %2 = clip(%1, a_min=-127f, a_max=127f);
                  %3 = cast(%2, dtype="int8");
                  %4 = nn.conv2d(%3, meta[relay.Constant][0], out_dtype="int32");
                  %5 = cast(%4, dtype="int64");
                  %6 = multiply(%5, meta[relay.Constant][1]);
                  %7 = add(%6, meta[relay.Constant][2]);
                  %8 = right_shift(%7, meta[relay.Constant][3]);
                  %9 = clip(%8, a_min=-127f, a_max=127f);
                  %10 = cast(%9, dtype="int8");
                  %11 = nn.max_pool2d(%10, pool_size=[2, 2]);
                  %12 = cast(%11, dtype="float32");
                  multiply(%12, 0.125f)
                }
                """ + meta(wq, m0, half, shift));
    }

    /** An unsigned point after a dense, requantized by a float multiply; per-tensor weights. */
    @Test
    void realizeUnsignedPointWithFloatRequantize() {
        NDArray w1 = f32(new int[] {2, 2}, 1, -0.5, 0.25, 2), w2 = f32(new int[] {1, 2}, 0.5, -1);
        NDArray w1q = NDArray.fromLongs(DType.INT8, new int[] {2, 2}, new long[] {4, -2, 1, 8});
        NDArray w2q = NDArray.fromLongs(DType.INT8, new int[] {1, 2}, new long[] {1, -2});
        assertRewrites(new Realize(QuantizeConfig.Requantize.FLOAT), """
                def @main(%x: Tensor[(1, 2), float32]) {
                  %0 = annotation.simulated_quantize(%x, 0.5f, kind="input");
                  %1 = annotation.simulated_quantize(meta[relay.Constant][0], 0.25f, kind="weight");
                  %2 = nn.dense(%0, %1);
                  %3 = annotation.simulated_quantize(%2, 0.25f, kind="activation", sign=False);
                  %4 = nn.relu(%3);
                  %5 = annotation.simulated_quantize(meta[relay.Constant][1], 0.5f, kind="weight");
                  nn.dense(%4, %5)
                }
                """ + meta(w1, w2), """
                def @main(%x: Tensor[(1, 2), float32]) {
                  %0 = cast(clip(round(divide(%x, 0.5f)), a_min=-127f, a_max=127f), dtype="int8");
                  %1 = nn.dense(%0, meta[relay.Constant][0], out_dtype="int32");
                  %2 = multiply(cast(%1, dtype="float32"), 0.5f);
                  %3 = cast(clip(round(%2), a_min=0f, a_max=255f), dtype="uint8");
                  %4 = nn.dense(nn.relu(%3), meta[relay.Constant][1], out_dtype="int32");
                  multiply(cast(%4, dtype="float32"), 0.125f)
                }
                """ + meta(w1q, w2q));
    }

    @Test
    void realizeRefusesAnUncalibratedPoint() {
        IRModule annotated = QuantizeText.run(new Annotate(QuantizeConfig.DEFAULT), QuantizeText.typed(NET)).module();
        PassException e = assertThrows(PassException.class, () -> QuantizeText.run(new Realize(QuantizeConfig.Requantize.FIXED_POINT), annotated));
        assertTrue(e.getMessage().contains("not calibrated"), e.getMessage());
    }

    @Test
    void fixedPointMultipliersAreExactForPowersOfTwoAndCloseOtherwise() {
        assertEquals(List.of(1L << 30, 31L), List.of(Realize.fixedPoint(0.5)[0], Realize.fixedPoint(0.5)[1]));
        for (double m : new double[] {0.7, 3.2e-3, 1.7e-7, 0.999999}) {
            long[] fp = Realize.fixedPoint(m);
            assertEquals(m, fp[0] * Math.scalb(1.0, (int) -fp[1]), m * 1e-9, "m = " + m);
            assertTrue(fp[0] >= 1L << 30 && fp[0] < 1L << 31);
        }
    }

    /**
     * The realized program computes what the calibrated, simulated program says (sq points evaluated by the
     * interpreter as clip(round(x / s)) * s) up to the rounding of biases and requantization: within 3% of the
     * output's range, for both requantize modes and all calibration modes.
     */
    @Test
    void realizedProgramMatchesTheSimulatedOne() {
        IRModule net = QuantizeText.typed(NET);
        List<List<NDArray>> calib = new ArrayList<>();
        for (int i = 0; i < 16; i++) calib.add(List.of(gaussian(100 + i, 1, 2, 8, 8)));
        for (Calibration.Mode mode : Calibration.Mode.values()) {
            for (QuantizeConfig.Requantize rq : QuantizeConfig.Requantize.values()) {
                QuantizeConfig cfg = QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of()).withCalibration(mode).withRequantize(rq).withGlobalScale(4.0);
                Quantizer.Result r = Quantizer.quantize(net, calib, cfg);
                for (int i = 0; i < 4; i++) {
                    NDArray x = gaussian(500 + i, 1, 2, 8, 8);
                    NDArray sim = ((TensorValue) Interpreter.runMain(r.calibration().module(), x)).data();
                    NDArray real = ((TensorValue) Interpreter.runMain(r.module(), x)).data();
                    NDArray fl = ((TensorValue) Interpreter.runMain(net, x)).data();
                    double range = 0, diff = 0;
                    for (int k = 0; k < fl.elementCount(); k++) {
                        range = Math.max(range, Math.abs(fl.getDouble(k)));
                        diff = Math.max(diff, Math.abs(sim.getDouble(k) - real.getDouble(k)));
                    }
                    assertTrue(diff <= 0.03 * range, mode + "/" + rq + ": realized differs from simulated by " + diff + " (range " + range + ")");
                }
            }
        }
    }

    static NDArray gaussian(long seed, int... shape) {
        Random r = new Random(seed);
        NDArray a = NDArray.zeros(DType.FLOAT32, shape);
        for (int i = 0; i < a.elementCount(); i++) a.setDouble(i, r.nextGaussian());
        return a;
    }
}
