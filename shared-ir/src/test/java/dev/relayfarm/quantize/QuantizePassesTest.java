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

    /** A point mixed precision widened to 16 bits: an int16 tensor, still an int32 accumulator (4 x 127 x 2^15 fits). */
    @Test
    void realizeWidenedPointAsInt16() {
        NDArray w = f32(new int[] {1, 4}, 1, -1, 0.5, 0.25);
        NDArray wq = NDArray.fromLongs(DType.INT8, new int[] {1, 4}, new long[] {4, -4, 2, 1});
        assertRewrites(new Realize(QuantizeConfig.Requantize.FIXED_POINT), """
                def @main(%x: Tensor[(1, 4), float32]) {
                  %0 = annotation.simulated_quantize(%x, 0.001953125f, kind="input", nbit=16);
                  %1 = annotation.simulated_quantize(meta[relay.Constant][0], 0.25f, kind="weight");
                  nn.dense(%0, %1)
                }
                """ + meta(w), """
                def @main(%x: Tensor[(1, 4), float32]) {
                  %0 = cast(clip(round(divide(%x, 0.001953125f)), a_min=-32767f, a_max=32767f), dtype="int16");
                  %1 = nn.dense(%0, meta[relay.Constant][0], out_dtype="int32");
                  multiply(cast(%1, dtype="float32"), 0.00048828125f)
                }
                """ + meta(wq));
    }

    /** int64 exactly when the widest data level times a channel's sum |w| could leave int32. */
    @Test
    void accumulatorWidensToInt64OnlyWhenInt32CouldOverflow() {
        NDArray small = NDArray.fromLongs(DType.INT8, new int[] {2, 516}, new long[1032]), large = NDArray.fromLongs(DType.INT8, new int[] {2, 517}, new long[1034]);
        for (int i = 0; i < 516; i++) small.setLong(516 + i, i % 2 == 0 ? 127 : -127);
        for (int i = 0; i < 517; i++) large.setLong(517 + i, i % 2 == 0 ? 127 : -127);
        // 516 * 127 * 32768 = 2,147,352,576 < 2^31 - 1 < 517 * 127 * 32768
        assertEquals(DType.INT32, Realize.accumulator(DType.INT16, small));
        assertEquals(DType.INT64, Realize.accumulator(DType.INT16, large));
        assertEquals(DType.INT32, Realize.accumulator(DType.UINT8, large));
    }

    /**
     * A 16-bit input over a 2400-long reduction of full-range weights: the accumulator can pass 2^31, so it is int64,
     * and it requantizes in float64 (times a 31-bit fixed-point multiplier, an accumulator beyond 2^32 would leave
     * int64); the realized program equals the simulated one on an input that drives it to 1e10.
     */
    @Test
    void anInt64AccumulatorRequantizesWithoutOverflow() {
        int k = 2400;
        NDArray w = NDArray.zeros(DType.FLOAT32, 1, k), s = f32(new int[] {1}, 1.0 / 127);
        for (int i = 0; i < k; i++) w.setDouble(i, 1.0);
        IRModule sim = QuantizeText.typed("""
                def @main(%x: Tensor[(1, 2400), float32]) {
                  %0 = annotation.simulated_quantize(%x, 0.0001f, kind="input", nbit=16);
                  %1 = annotation.simulated_quantize(meta[relay.Constant][0], meta[relay.Constant][1], kind="weight", axis=0);
                  %2 = nn.dense(%0, %1);
                  annotation.simulated_quantize(%2, 0.01f, kind="activation", nbit=16)
                }
                """ + meta(w, s));
        IRModule real = QuantizeText.run(new Realize(QuantizeConfig.Requantize.FIXED_POINT), sim).module();
        NDArray x = NDArray.zeros(DType.FLOAT32, 1, k);
        for (int i = 0; i < k; i++) x.setDouble(i, 3.2767); // 32767 levels each: the sum is 2400 * 127 * 32767 = 1e10
        double want = ((TensorValue) Interpreter.runMain(sim, x)).data().getDouble(0), got = ((TensorValue) Interpreter.runMain(real, x)).data().getDouble(0);
        assertEquals(want, got, 0.01 + 1e-9, "simulated " + want + " vs realized " + got);
        assertTrue(got > 100, "the clipped 16-bit output (327.67) far from a wrapped one: " + got);
        String text = dev.relayfarm.text.RelayPrinter.print(real);
        assertTrue(text.contains("out_dtype=\"int64\"") && text.contains("float64"), text);
    }

    /**
     * Mixed precision end to end on the test network: the k most sensitive points get 16 bits, the realized program
     * carries int16 tensors there and still computes what the simulated one says, and widening every activation point
     * brings the output closer to float than 8 bits do.
     */
    @Test
    void mixedPrecisionWidensTheMostSensitivePoints() {
        IRModule net = QuantizeText.typed(NET);
        List<List<NDArray>> calib = new ArrayList<>();
        for (int i = 0; i < 16; i++) calib.add(List.of(gaussian(100 + i, 1, 2, 8, 8)));
        QuantizeConfig eight = QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of()).withCalibration(Calibration.Mode.MINMAX);
        Quantizer.Result one = Quantizer.quantize(net, calib, eight.withMixedPrecision(new QuantizeConfig.MixedPrecision(1, 16)));
        assertEquals(1, one.calibration().points().stream().filter(p -> p.nbit() == 16).count());
        assertTrue(dev.relayfarm.text.RelayPrinter.print(one.module()).contains("dtype=\"int16\""), "no 16-bit tensor in the realized program");
        Quantizer.Result base = Quantizer.quantize(net, calib, eight);
        Quantizer.Result all = Quantizer.quantize(net, calib, eight.withMixedPrecision(new QuantizeConfig.MixedPrecision(100, 16)));
        assertEquals(3, all.calibration().points().stream().filter(p -> p.nbit() == 16).count(), "the network's three activation points");
        double baseErr = 0, allErr = 0;
        for (int i = 0; i < 8; i++) {
            NDArray x = gaussian(500 + i, 1, 2, 8, 8);
            NDArray fl = ((TensorValue) Interpreter.runMain(net, x)).data();
            NDArray b = ((TensorValue) Interpreter.runMain(base.module(), x)).data();
            NDArray a = ((TensorValue) Interpreter.runMain(all.module(), x)).data();
            NDArray sim = ((TensorValue) Interpreter.runMain(all.calibration().module(), x)).data();
            for (int k = 0; k < fl.elementCount(); k++) {
                baseErr += Math.abs(b.getDouble(k) - fl.getDouble(k));
                allErr += Math.abs(a.getDouble(k) - fl.getDouble(k));
                assertEquals(sim.getDouble(k), a.getDouble(k), 1e-3 * Math.max(1, Math.abs(fl.getDouble(k))), "realized 16-bit against simulated");
            }
        }
        assertTrue(allErr < 0.8 * baseErr, "16-bit activations should be closer to float: " + allErr + " vs 8-bit " + baseErr);
    }

    /** The ranking's first point, quantized alone, disturbs the output more than its last one. */
    @Test
    void sensitivityRanksTheMostDisturbingPointFirst() {
        IRModule net = QuantizeText.typed(NET);
        List<List<NDArray>> calib = new ArrayList<>();
        for (int i = 0; i < 8; i++) calib.add(List.of(gaussian(200 + i, 1, 2, 8, 8)));
        QuantizeConfig cfg = QuantizeConfig.DEFAULT.withSkipConvLayers(Set.of()).withCalibration(Calibration.Mode.MINMAX);
        IRModule annotated = Quantizer.annotate(net, cfg);
        IRModule calibrated = Calibration.calibrate(annotated, calib, cfg).module();
        dev.relayfarm.ir.Function main = annotated.main().orElseThrow(), cmain = calibrated.main().orElseThrow();
        List<dev.relayfarm.ir.Call> points = new ArrayList<>(), cpoints = new ArrayList<>();
        for (dev.relayfarm.ir.Expr e : dev.relayfarm.ir.ExprTraversal.postOrder(main.body())) if (Annotate.isPoint(e) && !((dev.relayfarm.ir.Call) e).args().get(0).getClass().equals(dev.relayfarm.ir.Constant.class)) points.add((dev.relayfarm.ir.Call) e);
        for (dev.relayfarm.ir.Expr e : dev.relayfarm.ir.ExprTraversal.postOrder(cmain.body())) if (Annotate.isPoint(e) && !((dev.relayfarm.ir.Call) e).args().get(0).getClass().equals(dev.relayfarm.ir.Constant.class)) cpoints.add((dev.relayfarm.ir.Call) e);
        java.util.Map<dev.relayfarm.ir.Call, dev.relayfarm.ir.Constant> scales = new java.util.IdentityHashMap<>();
        for (int i = 0; i < points.size(); i++) scales.put(points.get(i), (dev.relayfarm.ir.Constant) cpoints.get(i).args().get(1));
        List<dev.relayfarm.ir.Call> ranked = Sensitivity.rank(annotated, main, points, scales, calib);
        assertEquals(points.size(), ranked.size());
        double first = aloneError(annotated, main, ranked.getFirst(), scales, calib), last = aloneError(annotated, main, ranked.getLast(), scales, calib);
        assertTrue(first > last, "first " + first + " <= last " + last);
    }

    private static double aloneError(IRModule annotated, dev.relayfarm.ir.Function main, dev.relayfarm.ir.Call point,
                                     java.util.Map<dev.relayfarm.ir.Call, dev.relayfarm.ir.Constant> scales, List<List<NDArray>> inputs) {
        IRModule alone = Calibration.withPoints(annotated, main, (pre, post) -> pre == point
                ? new dev.relayfarm.ir.Call(post.callee(), List.of(post.args().get(0), scales.get(point)), post.attrs(), post.typeArgs(), post.span()) : post);
        // Sensitivity's own measure, computed here independently: the mean over inputs of ||q - f||^2 / ||f||^2
        double err = 0;
        for (List<NDArray> in : inputs) {
            NDArray f = ((TensorValue) Interpreter.runMain(annotated, in.getFirst())).data(), q = ((TensorValue) Interpreter.runMain(alone, in.getFirst())).data();
            double num = 0, den = 0;
            for (int k = 0; k < f.elementCount(); k++) {
                num += Math.pow(f.getDouble(k) - q.getDouble(k), 2);
                den += f.getDouble(k) * f.getDouble(k);
            }
            err += num / den;
        }
        return err / inputs.size();
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
