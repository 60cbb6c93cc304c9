package dev.relayfarm.vta.compile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The exact 32-bit ALU requantize against Realize's int64 formula, followed by its clip. */
class FixedPointPlanTest {
    private static long clipped(long a, long m0, long sh, int qmin, int qmax) {
        return Math.min(Math.max(FixedPointPlan.reference(a, m0, sh), qmin), qmax);
    }

    @Test
    void agreesWithTheInt64FormulaOnRandomMultipliersAndAccumulators() {
        Random r = new Random(7);
        for (int trial = 0; trial < 300; trial++) {
            int n = 1 + r.nextInt(4);
            long[] m0 = new long[n], sh = new long[n];
            for (int c = 0; c < n; c++) {
                m0[c] = (1L << 30) + r.nextLong(1L << 30);
                // multipliers from 2^-17 to 2^3: shifts 28..48
                sh[c] = 28 + r.nextInt(21);
            }
            boolean unsigned = r.nextBoolean();
            int qmin = unsigned ? 0 : -127, qmax = unsigned ? 255 : 127;
            FixedPointPlan plan = FixedPointPlan.of(new EpilogueOp.Requantize(m0, sh, qmin, qmax));
            for (int c = 0; c < n; c++) {
                int[] edges = {Integer.MIN_VALUE, Integer.MAX_VALUE, 0, -1, 1, plan.lo()[c], plan.hi()[c], plan.lo()[c] + 1, plan.hi()[c] - 1};
                for (int a : edges) assertEquals(clipped(a, m0[c], sh[c], qmin, qmax), Math.min(Math.max(plan.evaluate(c, a), qmin), qmax), "a=" + a);
                for (int i = 0; i < 2000; i++) {
                    int a = i % 2 == 0 ? r.nextInt() : (int) (r.nextGaussian() * Math.max(1, Math.abs((long) plan.hi()[c])));
                    assertEquals(clipped(a, m0[c], sh[c], qmin, qmax), Math.min(Math.max(plan.evaluate(c, a), qmin), qmax),
                            "channel " + c + " m0=" + m0[c] + " sh=" + sh[c] + " a=" + a);
                }
            }
        }
    }

    @Test
    void everyRoundingBoundaryAroundTheSaturationPointsIsExact() {
        long m0 = 1_518_500_250L, sh = 38; // m ≈ 0.0055
        FixedPointPlan plan = FixedPointPlan.of(new EpilogueOp.Requantize(new long[] {m0}, new long[] {sh}, -127, 127));
        assertTrue(plan.segments().size() > 1, "a 38-bit shift cannot be one 32-bit product: " + plan.segments());
        // m < 1: the early saturation lands exactly on the clip bounds, so the clip after it is redundant
        assertTrue(plan.withinClip());
        assertEquals(127, FixedPointPlan.reference(plan.hi()[0], m0, sh));
        assertEquals(126, FixedPointPlan.reference(plan.hi()[0] - 1, m0, sh));
        assertEquals(-127, FixedPointPlan.reference(plan.lo()[0], m0, sh));
        assertEquals(-126, FixedPointPlan.reference(plan.lo()[0] + 1, m0, sh));
        for (int a = plan.lo()[0] - 500; a <= plan.hi()[0] + 500; a++) {
            assertEquals(clipped(a, m0, sh, -127, 127), Math.min(Math.max(plan.evaluate(0, a), -127), 127), "a=" + a);
        }
    }

    @Test
    void theSmallestMultiplierWithAPlanIsAbout2ToTheMinus23() {
        // m = 2^-22 · 1.5 and 2^-22 for an int8 output: |a| saturates near 2^29, digits of one or two bits still fit
        long[] m0 = {3L << 29, 1L << 30}, sh = {52, 52};
        FixedPointPlan plan = FixedPointPlan.of(new EpilogueOp.Requantize(m0, sh, -127, 127));
        Random r = new Random(3);
        for (int c = 0; c < 2; c++) {
            for (int i = 0; i < 5000; i++) {
                int a = r.nextInt();
                assertEquals(clipped(a, m0[c], sh[c], -127, 127), Math.min(Math.max(plan.evaluate(c, a), -127), 127), "a=" + a);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> FixedPointPlan.of(new EpilogueOp.Requantize(new long[] {1L << 30}, new long[] {55}, -127, 127)));
    }

    @Test
    void aMultiplierTooSmallToSaturateWithinInt32IsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FixedPointPlan.of(new EpilogueOp.Requantize(new long[] {1L << 30}, new long[] {62}, -127, 127)));
        assertTrue(e.getMessage().contains("cannot run exactly on the accelerator"), e.getMessage());
    }
}
