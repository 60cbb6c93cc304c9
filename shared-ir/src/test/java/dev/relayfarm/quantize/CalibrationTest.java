package dev.relayfarm.quantize;

import static dev.relayfarm.quantize.QuantizeText.f32;
import static dev.relayfarm.quantize.QuantizeText.meta;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.relayfarm.ir.Call;
import dev.relayfarm.ir.Constant;
import dev.relayfarm.ir.Expr;
import dev.relayfarm.ir.ExprTraversal;
import dev.relayfarm.ir.IRModule;
import dev.relayfarm.ir.NDArray;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Thresholds on known distributions, and calibration of an annotated program end to end. */
class CalibrationTest {
    private static float[] uniform(long seed, int n) {
        Random r = new Random(seed);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) v[i] = (float) (r.nextDouble() * 2 - 1);
        return v;
    }

    private static float[] gaussianWithOutliers(long seed, int n, int outliers, float at) {
        Random r = new Random(seed);
        float[] v = new float[n + outliers];
        for (int i = 0; i < n; i++) v[i] = (float) r.nextGaussian();
        for (int i = 0; i < outliers; i++) v[n + i] = i % 2 == 0 ? at : -at;
        return v;
    }

    private static Histogram histogram(float[] v) {
        double max = 0;
        for (float x : v) max = Math.max(max, Math.abs(x));
        Histogram h = new Histogram(max, Calibration.HISTOGRAM_BINS);
        h.addAbs(v);
        return h;
    }

    @Test
    void percentileOfAUniformDistribution() {
        Histogram h = histogram(uniform(1, 1_000_000));
        assertEquals(0.99, h.percentile(99), 2e-3);
        assertEquals(0.5, h.percentile(50), 2e-3);
        assertEquals(1.0, h.percentile(100), 1e-3);
        // 99.99 of |N(0,1)| is 3.89
        assertEquals(3.89, histogram(gaussianWithOutliers(2, 2_000_000, 0, 0)).percentile(99.99), 0.05);
    }

    /** With nothing to clip, the 128-level quantization of the whole range loses least: the threshold is near the max. */
    @Test
    void klKeepsTheRangeOfAUniformDistribution() {
        Histogram h = histogram(uniform(3, 500_000));
        double t = h.klThreshold(Calibration.KL_LEVELS);
        assertTrue(t > 0.9 && t <= 1.0 + 1e-6, "threshold " + t);
    }

    /** A few far outliers on a Gaussian: KL clips them (TensorRT's point), min/max would not. */
    @Test
    void klClipsFarOutliersOfAGaussian() {
        float[] v = gaussianWithOutliers(4, 500_000, 10, 100f);
        Histogram h = histogram(v);
        double t = h.klThreshold(Calibration.KL_LEVELS);
        assertTrue(t > 2.0 && t < 12.0, "KL threshold " + t + " for N(0,1) with outliers at 100");
        assertTrue(h.percentile(99.99) < 5, "the 99.99th percentile ignores 10 outliers in 500k");
    }

    @Test
    void weightScalesArePerChannelMaxAbs() {
        NDArray w = f32(new int[] {2, 1, 2, 1}, 0.5, -2, 0, 0.25);
        assertArrayEquals(new double[] {2, 0.25}, Calibration.maxAbs(w, 0));
        assertArrayEquals(new double[] {2}, Calibration.maxAbs(w, -1));
    }

    /**
     * Activation points get threshold / 127 from the instrumented run: the input point sees |x| up to the calibration
     * set's max (min/max mode), the point after relu(x * 2) twice that; global scale gives every point 8 / 127.
     */
    @Test
    void calibrationFillsActivationAndWeightScales() {
        NDArray w = f32(new int[] {2, 3}, 1, -4, 2, 0.5, 0.25, -1);
        IRModule m = QuantizeText.typed("""
                def @main(%x: Tensor[(1, 3), float32]) {
                  %0 = annotation.simulated_quantize(%x, 0f, kind="input");
                  %1 = annotation.simulated_quantize(meta[relay.Constant][0], 0f, kind="weight", axis=0);
                  %2 = nn.dense(%0, %1);
                  %3 = annotation.simulated_quantize(nn.relu(multiply(%2, 2f)), 0f, kind="activation");
                  nn.relu(%3)
                }
                """ + meta(w));
        List<List<NDArray>> calib = new ArrayList<>();
        for (int i = 0; i < 8; i++) calib.add(List.of(f32(new int[] {1, 3}, i * 0.25, -0.5, 0)));
        Calibration.Result r = Calibration.calibrate(m, calib, QuantizeConfig.DEFAULT.withCalibration(Calibration.Mode.MINMAX));
        // post-order: input, weight, activation
        assertEquals(List.of("input", "weight", "activation"), r.points().stream().map(Calibration.PointScale::kind).toList());
        assertEquals(1.75 / 127, r.points().get(0).scales()[0], 1e-9);
        assertArrayEquals(new double[] {4.0 / 127, 1.0 / 127}, r.points().get(1).scales(), 1e-9);
        // dense row 0 at x = (1.75, -0.5, 0): 1.75 + 2 = 3.75, times 2
        assertEquals(7.5 / 127, r.points().get(2).scales()[0], 1e-6);
        List<Constant> scales = new ArrayList<>();
        for (Expr e : ExprTraversal.postOrder(r.module().main().orElseThrow().body())) {
            if (Annotate.isPoint(e)) scales.add((Constant) ((Call) e).args().get(1));
        }
        assertEquals(0, scales.get(0).data().rank(), "per-tensor: a scalar");
        assertEquals(1, scales.get(1).data().rank(), "per-channel: one per output channel");

        Calibration.Result global = Calibration.calibrate(m, List.of(), QuantizeConfig.DEFAULT.withCalibration(Calibration.Mode.GLOBAL_SCALE));
        assertEquals(8.0 / 127, global.points().get(0).scales()[0], 1e-12);
        assertEquals(8.0 / 127, global.points().get(2).scales()[0], 1e-12);
        assertArrayEquals(new double[] {4.0 / 127, 1.0 / 127}, global.points().get(1).scales(), 1e-9);
        assertTrue(Set.of(Calibration.Mode.values()).size() == 4);
    }

    /** An unsigned point (after a relu) is calibrated on its positive values: [0, 255] levels, negatives ignored. */
    @Test
    void unsignedPointsCountOnlyPositiveValues() {
        IRModule m = QuantizeText.typed("""
                def @main(%x: Tensor[(1, 3), float32]) {
                  nn.relu(annotation.simulated_quantize(%x, 0f, kind="activation", sign=False))
                }
                """);
        List<List<NDArray>> calib = List.of(List.of(f32(new int[] {1, 3}, -10, 0.5, 2.55)));
        Calibration.Result r = Calibration.calibrate(m, calib, QuantizeConfig.DEFAULT.withCalibration(Calibration.Mode.MINMAX));
        assertEquals(2.55, r.points().get(0).thresholds()[0], 1e-6);
        assertEquals(0.01, r.points().get(0).scales()[0], 1e-8);
    }
}
